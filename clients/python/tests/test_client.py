"""The client against a JobService served in this process: what it sends, and what each failure reads like."""
import datetime
import socket
import threading

import grpc
import pytest

import gpucloud
from gpucloud import Client
from gpucloud.v1 import job_pb2

from conftest import job


def client_for(scheduler, **kwargs):
    kwargs.setdefault("token", "tok-1")
    return Client(scheduler.address, **kwargs)


def test_submit_sends_the_spec_the_token_and_one_request_id(no_login, scheduler):
    scheduler.service.answers["SubmitJob"] = lambda r, c: job_pb2.SubmitJobResponse(job=job(spec=r.spec))
    with client_for(scheduler) as c:
        submitted = c.submit(command=["sleep", "5"], resources={"gpus": 2, "memory": "16Gi"}, tenant="acme")
    assert submitted.job_id == "job-1" and submitted.spec.memory_mib_per_worker == 16384
    method, request, metadata = scheduler.service.calls[0]
    assert method == "SubmitJob" and request.tenant == "acme" and request.spec.gpus_per_worker == 2
    assert request.client_request_id.startswith("py-") and metadata["authorization"] == "Bearer tok-1"


def test_submit_takes_the_description_s_tenant_and_request_id(no_login, scheduler):
    scheduler.service.answers["SubmitJob"] = job_pb2.SubmitJobResponse(job=job())
    with client_for(scheduler) as c:
        c.submit({"command": ["x"], "tenant": "globex", "request_id": "run-7"})
        c.submit(gpucloud.job_spec(command=["x"]), request_id="run-8")
    assert [(r.tenant, r.client_request_id) for _, r, _ in scheduler.service.calls] == [("globex", "run-7"),
                                                                                       ("", "run-8")]


def test_a_bad_description_sends_nothing(no_login, scheduler):
    with client_for(scheduler) as c, pytest.raises(gpucloud.SpecError, match="unknown field 'gpu' in resources"):
        c.submit(command=["x"], resources={"gpu": 1})
    assert scheduler.service.calls == []


def test_the_token_of_gpucloud_login(no_login, scheduler):
    (no_login / "profiles").mkdir(parents=True)
    (no_login / "profiles" / "acme.token").write_text("tok-acme\n")
    scheduler.service.answers["GetJob"] = job()
    with Client(scheduler.address, profile="acme") as c:
        c.get("job-1")
    assert scheduler.service.calls[0][2]["authorization"] == "Bearer tok-acme"


def test_the_server_from_gpucloud_scheduler(no_login, scheduler, monkeypatch):
    monkeypatch.setenv("GPUCLOUD_SCHEDULER", scheduler.address)
    scheduler.service.answers["GetJob"] = job()
    with Client(token="t") as c:
        assert c.get("job-1").job_id == "job-1"


def test_localhost_8081_by_default(no_login):
    assert Client(token="t").addresses == ["localhost:8081"]


def test_list_follows_pages_up_to_the_limit_with_states(no_login, scheduler):
    def page(request, context):
        start = int(request.page_token or 0)
        return job_pb2.ListJobsResponse(jobs=[job("job-%d" % i) for i in range(start, start + request.page_size)],
                                        next_page_token=str(start + request.page_size) if start < 20 else "")
    scheduler.service.answers["ListJobs"] = page
    with client_for(scheduler) as c:
        jobs = c.list(tenant="acme", states=["running", "Pending"], limit=12, page_size=5)
    assert [j.job_id for j in jobs] == ["job-%d" % i for i in range(12)]
    requests = [r for _, r, _ in scheduler.service.calls]
    assert [r.page_size for r in requests] == [5, 5, 2]
    assert list(requests[0].states) == [job_pb2.RUNNING, job_pb2.PENDING] and requests[0].tenant == "acme"


def test_cancel_with_its_reason(no_login, scheduler):
    scheduler.service.answers["CancelJob"] = lambda r, c: job(r.job_id, job_pb2.CANCELLED, reason=r.reason)
    with client_for(scheduler) as c:
        cancelled = c.cancel("job-9", reason="wrong data")
    assert gpucloud.state_name(cancelled.state) == "CANCELLED" and cancelled.reason == "wrong data"


def test_watch_yields_each_event_until_the_end(no_login, scheduler):
    events = [job_pb2.JobEvent(job_id="job-1", state=s) for s in (job_pb2.PENDING, job_pb2.RUNNING,
                                                                  job_pb2.SUCCEEDED)]
    scheduler.service.answers["WatchJob"] = lambda r, c: iter(events)
    with client_for(scheduler) as c:
        assert [gpucloud.state_name(e.state) for e in c.watch("job-1")] == ["PENDING", "RUNNING", "SUCCEEDED"]


def test_logs_asks_for_follow_rank_since_and_stream_and_yields_lines(no_login, scheduler):
    at = job_pb2.LogLine().at
    at.FromDatetime(datetime.datetime(2026, 12, 7, 10, 0, 0))
    chunk = job_pb2.LogChunk(job_id="job-1", allocation_id="a-1", rank=1, stream=job_pb2.LOG_STDERR, node_id="n-0",
                             lines=[job_pb2.LogLine(at=at, text="epoch 1", offset=0),
                                    job_pb2.LogLine(at=at, text="epoch 2", offset=8, dropped_lines=3,
                                                    dropped_bytes=30)])
    scheduler.service.answers["StreamLogs"] = lambda r, c: iter([chunk])
    since = datetime.datetime(2026, 12, 7, 9, 0, tzinfo=datetime.timezone.utc)
    with client_for(scheduler) as c:
        lines = list(c.logs("job-1", follow=True, rank=1, since=since, stream="stderr"))
    assert [(l.text, l.rank, l.stream, l.node_id, l.dropped_lines) for l in lines] == [
        ("epoch 1", 1, "stderr", "n-0", 0), ("epoch 2", 1, "stderr", "n-0", 3)]
    assert lines[0].at == datetime.datetime(2026, 12, 7, 10, tzinfo=datetime.timezone.utc)
    request = scheduler.service.calls[0][1]
    assert request.follow and request.HasField("rank") and request.rank == 1
    assert request.stream == job_pb2.LOG_STDERR and request.since.ToDatetime() == datetime.datetime(2026, 12, 7, 9)


def test_logs_of_every_worker_leave_rank_unset(no_login, scheduler):
    scheduler.service.answers["StreamLogs"] = lambda r, c: iter([])
    with client_for(scheduler) as c:
        assert list(c.logs("job-1")) == []
    assert not scheduler.service.calls[0][1].HasField("rank")


@pytest.mark.parametrize("kwargs, message", [
    ({"rank": -1}, "rank: a worker's rank, 0 or more"),
    ({"rank": "0"}, "rank: a worker's rank"),
    ({"since": datetime.datetime(2026, 1, 1)}, "since: an aware datetime"),
    ({"since": "10m"}, "since: an aware datetime"),
    ({"stream": "both"}, "stream: 'stdout' or 'stderr'"),
    ({"follow": "yes"}, "follow: True or False"),
    ({"timeout": 0}, "timeout: seconds above 0 for the whole stream"),
])
def test_logs_bad_input(no_login, scheduler, kwargs, message):
    with client_for(scheduler) as c, pytest.raises(ValueError, match=message):
        c.logs("job-1", **kwargs)


@pytest.mark.parametrize("call", [lambda c: c.get(""), lambda c: c.get(None), lambda c: c.cancel("  "),
                                  lambda c: c.watch(7)])
def test_a_missing_job_id(no_login, scheduler, call):
    with client_for(scheduler) as c, pytest.raises(ValueError, match="job_id: a job's id"):
        call(c)


@pytest.mark.parametrize("kwargs, message", [
    ({"states": ["sleeping"]}, "states: 'sleeping' is not one of pending, scheduled, running"),
    ({"limit": 0}, "limit: a whole number of jobs >= 1"),
    ({"page_size": 501}, "page_size: 1..500"),
    ({"tenant": 3}, "tenant: a tenant id"),
])
def test_list_bad_input(no_login, scheduler, kwargs, message):
    with client_for(scheduler) as c, pytest.raises(ValueError, match=message):
        c.list(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"scheduler": "localhost"}, "'localhost' is not host:port"),
    ({"scheduler": " , "}, "no address"),
    ({"timeout": 0}, "timeout: seconds above 0"),
    ({"token": ""}, "token: a bearer token"),
    ({"profile": "../x"}, "profile must be"),
])
def test_client_bad_input(no_login, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Client(**kwargs)


def test_a_ca_file_that_is_missing_or_not_pem(no_login, tmp_path):
    with pytest.raises(gpucloud.GpucloudError, match="ca_file: cannot read .*nope.pem"):
        Client("localhost:1", ca_file=str(tmp_path / "nope.pem"), token="t")
    (tmp_path / "x.pem").write_text("hello")
    with pytest.raises(gpucloud.GpucloudError, match="holds no PEM certificate"):
        Client("localhost:1", ca_file=str(tmp_path / "x.pem"), token="t")


def abort(code, message, trailers=None):
    def answer(request, context):
        if trailers:
            context.set_trailing_metadata(trailers)
        context.abort(code, message)
    return answer


def test_unauthenticated_says_to_log_in_and_whose_token(no_login, scheduler):
    scheduler.service.answers["GetJob"] = abort(grpc.StatusCode.UNAUTHENTICATED, "the token has expired")
    with client_for(scheduler) as c, pytest.raises(gpucloud.NotAuthenticated) as raised:
        c.get("job-1")
    assert "run `gpucloud login`" in str(raised.value) and "the token has expired" in str(raised.value)
    assert "Traceback" not in str(raised.value)


def test_no_token_at_all_says_where_it_looked(no_login, scheduler):
    scheduler.service.answers["GetJob"] = abort(grpc.StatusCode.UNAUTHENTICATED, "no bearer token")
    with Client(scheduler.address) as c, pytest.raises(gpucloud.NotAuthenticated) as raised:
        c.get("job-1")
    assert "no token: GPUCLOUD_TOKEN is not set" in str(raised.value)
    assert "default.token" in str(raised.value) and "run `gpucloud login`" in str(raised.value)
    assert "authorization" not in scheduler.service.calls[0][2]


@pytest.mark.parametrize("code, kind", [
    (grpc.StatusCode.NOT_FOUND, gpucloud.NotFound), (grpc.StatusCode.PERMISSION_DENIED, gpucloud.PermissionDenied),
    (grpc.StatusCode.INVALID_ARGUMENT, gpucloud.InvalidArgument),
    (grpc.StatusCode.RESOURCE_EXHAUSTED, gpucloud.QuotaExceeded),
    (grpc.StatusCode.FAILED_PRECONDITION, gpucloud.FailedPrecondition),
])
def test_each_status_is_its_own_exception_with_the_server_s_words(no_login, scheduler, code, kind):
    scheduler.service.answers["CancelJob"] = abort(code, "job 'job-1' not found\nsecond line")
    with client_for(scheduler) as c, pytest.raises(kind) as raised:
        c.cancel("job-1")
    assert str(raised.value) == code.name + ": job 'job-1' not found" and raised.value.code == code.name


def test_unimplemented_says_the_scheduler_is_older(no_login, scheduler):
    with client_for(scheduler) as c, pytest.raises(gpucloud.Unimplemented, match="older than this client"):
        list(c.logs("job-1"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_names_the_address_and_what_to_do(no_login):
    address = "127.0.0.1:%d" % free_port()
    with Client(address, token="t") as c, pytest.raises(gpucloud.SchedulerUnavailable) as raised:
        c.get("job-1")
    assert str(raised.value).startswith("cannot reach the scheduler at " + address)
    assert "./gpucloud up" in str(raised.value) and "GPUCLOUD_SCHEDULER" in str(raised.value)


def test_a_standby_moves_the_call_to_the_leader_it_names(no_login, served):
    standby, leader = served(), served()
    standby.service.answers["SubmitJob"] = abort(grpc.StatusCode.UNAVAILABLE, "not the leader; retry there",
                                                 (("gpucloud-leader", leader.address),))
    leader.service.answers["SubmitJob"] = lambda r, c: job_pb2.SubmitJobResponse(job=job())
    notices = []
    with Client(standby.address + "," + leader.address, token="t", notices=notices.append) as c:
        c.submit(command=["x"], request_id="once")
    assert [r.client_request_id for _, r, _ in standby.service.calls + leader.service.calls] == ["once", "once"]
    assert "retrying at the leader " + leader.address in notices[0]


def test_a_stopped_instance_moves_the_call_to_the_next(no_login, served):
    live = served()
    live.service.answers["GetJob"] = job()
    down = "127.0.0.1:%d" % free_port()
    with Client(down + "," + live.address, token="t") as c:
        assert c.get("job-1").job_id == "job-1"


def test_no_leader_within_the_failover_time(no_login, scheduler):
    scheduler.service.answers["GetJob"] = abort(grpc.StatusCode.UNAVAILABLE, "no leader yet")
    with client_for(scheduler, failover_timeout=0) as c, pytest.raises(gpucloud.SchedulerUnavailable) as raised:
        c.get("job-1")
    assert "no scheduler at %s took GetJob" % scheduler.address in str(raised.value)
    assert "no leader yet" in str(raised.value)


def test_every_unary_call_has_a_deadline(no_login, scheduler):
    release = threading.Event()

    def slow(request, context):
        release.wait(10)
        return job()
    scheduler.service.answers["GetJob"] = slow
    try:
        with client_for(scheduler, timeout=0.2) as c, pytest.raises(gpucloud.DeadlineExceeded) as raised:
            c.get("job-1")
    finally:
        release.set()
    assert "did not answer GetJob within its deadline (0.2 s)" in str(raised.value)


def test_a_watch_that_outlasts_its_timeout(no_login, scheduler):
    release = threading.Event()

    def never_ends(request, context):
        yield job_pb2.JobEvent(job_id="job-1", state=job_pb2.RUNNING)
        release.wait(10)
    scheduler.service.answers["WatchJob"] = never_ends
    try:
        with client_for(scheduler) as c, pytest.raises(gpucloud.DeadlineExceeded, match="WatchJob from .* had not"
                                                                                          " ended"):
            list(c.watch("job-1", timeout=0.3))
    finally:
        release.set()


def test_a_watch_with_a_bad_job_id_fails_before_iterating(no_login, scheduler):
    with client_for(scheduler) as c, pytest.raises(ValueError):
        c.watch("")


@pytest.fixture
def tls_files(tmp_path):
    """A CA of the test's own and a certificate for localhost signed by it (openssl, as deploy/local/tls.sh)."""
    import shutil
    import subprocess
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=tmp_path, check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=test-ca")
    (tmp_path / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
            "/CN=localhost")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
            "server.pem", "-days", "2", "-extfile", "ext")
    return tmp_path


def test_tls_with_the_ca_file_and_gpucloud_ca_file(no_login, tls_files, monkeypatch):
    from concurrent import futures
    from conftest import FakeJobService
    from gpucloud.v1 import job_pb2_grpc
    service = FakeJobService()
    service.answers["GetJob"] = job()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    job_pb2_grpc.add_JobServiceServicer_to_server(service, server)
    credentials = grpc.ssl_server_credentials([((tls_files / "server.key").read_bytes(),
                                                (tls_files / "server.pem").read_bytes())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    try:
        with Client("localhost:%d" % port, ca_file=str(tls_files / "ca.pem"), token="t") as c:
            assert c.get("job-1").job_id == "job-1"
        monkeypatch.setenv("GPUCLOUD_CA_FILE", str(tls_files / "ca.pem"))
        with Client("localhost:%d" % port, token="t") as c:
            assert c.get("job-1").job_id == "job-1"
        monkeypatch.delenv("GPUCLOUD_CA_FILE")
        with Client("localhost:%d" % port, token="t", failover_timeout=0) as c, \
                pytest.raises(gpucloud.SchedulerUnavailable, match="takes ca_file= or GPUCLOUD_CA_FILE"):
            c.get("job-1")  # plaintext to a TLS port gets no answer it can read
    finally:
        server.stop(None)
