"""Fixtures: a JobService of the test's own, served in this process on a free port, and the running stack."""
import os
import threading
from concurrent import futures

import grpc
import pytest

from gpucloud.v1 import job_pb2, job_pb2_grpc


class FakeJobService(job_pb2_grpc.JobServiceServicer):
    """Answers as the test tells it (``answers[method]``: a message, a list of messages for a stream, or a
    callable(request, context)), and records each call's request and metadata."""

    def __init__(self):
        self.calls = []
        self.answers = {}
        self.lock = threading.Lock()

    def _answer(self, method, request, context):
        with self.lock:
            self.calls.append((method, request, dict(context.invocation_metadata())))
        answer = self.answers.get(method)
        if answer is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found: gpucloud.v1.JobService/" + method)
        return answer(request, context) if callable(answer) else answer

    def SubmitJob(self, request, context):
        return self._answer("SubmitJob", request, context)

    def GetJob(self, request, context):
        return self._answer("GetJob", request, context)

    def ListJobs(self, request, context):
        return self._answer("ListJobs", request, context)

    def CancelJob(self, request, context):
        return self._answer("CancelJob", request, context)

    def WatchJob(self, request, context):
        yield from self._answer("WatchJob", request, context)

    def StreamLogs(self, request, context):
        yield from self._answer("StreamLogs", request, context)


class Served:
    def __init__(self):
        self.service = FakeJobService()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        job_pb2_grpc.add_JobServiceServicer_to_server(self.service, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = "127.0.0.1:%d" % self.port
        self.server.start()

    def stop(self):
        self.server.stop(None)


@pytest.fixture
def served():
    servers = []

    def start():
        s = Served()
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def scheduler(served):
    return served()


@pytest.fixture
def no_login(tmp_path, monkeypatch):
    """An empty gpucloud home and no GPUCLOUD_* settings: what a test sets is all there is."""
    for name in list(os.environ):
        if name.startswith("GPUCLOUD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GPUCLOUD_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def job(job_id="job-1", state=job_pb2.PENDING, **fields):
    return job_pb2.Job(job_id=job_id, tenant="acme", state=state, **fields)


@pytest.fixture
def stack():
    """The stack that PythonClientIT (or you) started: GPUCLOUD_SCHEDULER, GPUCLOUD_CA_FILE, and a login in
    GPUCLOUD_HOME or GPUCLOUD_TOKEN. Skipped without one, unless GPUCLOUD_STACK_REQUIRED=1 (the IT sets it)."""
    if not os.environ.get("GPUCLOUD_SCHEDULER"):
        if os.environ.get("GPUCLOUD_STACK_REQUIRED") == "1":
            pytest.fail("GPUCLOUD_STACK_REQUIRED=1 but GPUCLOUD_SCHEDULER is not set")
        pytest.skip("no running stack: set GPUCLOUD_SCHEDULER (and log in) to run the integration tests")
    import gpucloud
    with gpucloud.Client() as client:
        yield client
