"""Arrays, dependencies and DAGs from Python, against a JobService served in this process that is idempotent on
the request id as the scheduler is (a repeat gets the first answer, marked duplicate)."""
import threading

import grpc
import pytest

import gpucloud
from gpucloud import Client, array_of
from gpucloud.v1 import job_pb2

from conftest import job


class Idempotent:
    """SubmitJob that gives job-N (arr-N for an array) once per request id; refuses a job named ``refuse``."""

    def __init__(self):
        self.first = {}
        self.sent = []
        self.refuse = None
        self.lock = threading.Lock()

    def __call__(self, request, context):
        with self.lock:
            if request.spec.name == self.refuse:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "spec.after[0].job_id: job-x failed")
            if request.client_request_id in self.first:
                answer = job_pb2.SubmitJobResponse()
                answer.CopyFrom(self.first[request.client_request_id])
                answer.duplicate = True
                return answer
            self.sent.append(request)
            n = "%012x" % len(self.sent)
            state = job_pb2.WAITING_FOR_DEPENDENCIES if request.spec.after else job_pb2.PENDING
            if request.HasField("array"):
                answer = job_pb2.SubmitJobResponse(job=job("arr-%s-0" % n, state, array_id="arr-" + n),
                                                   array_id="arr-" + n, array_count=request.array.count)
            else:
                answer = job_pb2.SubmitJobResponse(job=job("job-" + n, state))
            self.first[request.client_request_id] = answer
            return answer


@pytest.fixture
def idempotent(scheduler):
    answer = Idempotent()
    scheduler.service.answers["SubmitJob"] = answer
    return answer


def client_for(scheduler):
    return Client(scheduler.address, token="tok-1")


def test_a_job_alone_still_comes_back_as_the_job(no_login, scheduler, idempotent):
    with client_for(scheduler) as c:
        submitted = c.submit(command=["x"], after=["job-a", ("arr-b", "any")], time_limit_seconds=3600)
    assert submitted.job_id == "job-000000000001"
    spec = idempotent.sent[0].spec
    assert [(d.job_id, d.on) for d in spec.after] == [("job-a", job_pb2.AFTER_SUCCESS), ("arr-b", job_pb2.AFTER_ANY)]
    assert spec.time_limit_seconds == 3600 and not idempotent.sent[0].HasField("array")


def test_an_array_comes_back_with_its_id_and_size(no_login, scheduler, idempotent):
    with client_for(scheduler) as c:
        grid = c.submit(command=["python", "train.py"], array={"LR": ["1e-3", 1e-4], "BATCH": [32, 64, 128]},
                        after=[job_pb2.Dependency(job_id="job-prep", on=job_pb2.AFTER_ANY)])
        counted = c.submit({"command": ["x"], "array": 16})
    assert isinstance(grid, gpucloud.Submitted) and grid.array_id == "arr-000000000001" and grid.array_count == 6
    assert grid.job.job_id == "arr-000000000001-0" and grid.id == "arr-000000000001"
    sent = idempotent.sent[0]
    assert [(p.name, list(p.values)) for p in sent.array.parameters] == [("LR", ["1e-3", "0.0001"]),
                                                                         ("BATCH", ["32", "64", "128"])]
    assert sent.array.count == 6 and sent.spec.after[0].on == job_pb2.AFTER_ANY
    assert counted.array_count == 16 and not idempotent.sent[1].array.parameters


@pytest.mark.parametrize("array, message", [
    (0, "count is 0; an array has 1..10000"),
    (10_001, "count is 10001"),
    (True, "a count of elements"),
    ("16", "a count of elements"),
    ({}, "the grid has no parameters"),
    ({"grid": {}}, "the grid has no parameters"),
    ({"2LR": [1]}, "'2LR' is not a variable name"),
    ({"LR": []}, "LR has no values"),
    ({"LR": "1e-3"}, "LR: a list of values"),
    ({"LR": [[1]]}, "each value is a string or a number"),
    ({"GPUCLOUD_ARRAY_INDEX": [1]}, "gives every element itself"),
    ({n: [1] for n in "ABCDEFGHI"}, "the grid has 9 parameters; at most 8"),
    ({"A": list(range(101)), "B": list(range(100))}, "10100 combinations"),
    ({"count": 3, "grid": {"A": [1, 2]}}, "count is 3 but the grid has 2 combinations"),
])
def test_an_array_the_scheduler_would_refuse_is_refused_before_sending(no_login, scheduler, idempotent, array,
                                                                       message):
    with client_for(scheduler) as c, pytest.raises(gpucloud.SpecError, match=message.replace("(", r"\(")):
        c.submit(command=["x"], array=array)
    assert idempotent.sent == []


def test_the_job_file_form_of_an_array_reads_the_same():
    assert array_of({"count": 4, "grid": {"A": [1, 2], "B": ["x", "y"]}}) == array_of({"A": [1, 2], "B": ["x", "y"]})
    assert array_of({"count": 5}).count == 5


@pytest.mark.parametrize("after, message", [
    ([("job-1", "later")], "'later' is not one of success, any"),
    ([{"id": "job-1"}], "each entry is a job or array id"),
    ([""], "names no job"),
    (["job-1"] * 65, "at most 64 jobs, has 65"),
])
def test_a_bad_dependency_is_refused_before_sending(no_login, scheduler, idempotent, after, message):
    with client_for(scheduler) as c, pytest.raises(gpucloud.SpecError, match=message):
        c.submit(command=["x"], after=after)
    assert idempotent.sent == []


def test_list_of_an_array_asks_for_its_elements(no_login, scheduler):
    scheduler.service.answers["ListJobs"] = lambda r, c: job_pb2.ListJobsResponse(
        jobs=[job("%s-%d" % (r.array_id, i), array_id=r.array_id, array_index=i) for i in range(3)])
    with client_for(scheduler) as c:
        elements = c.list(array_id="arr-0123456789ab")
        with pytest.raises(ValueError, match="array_id: an array's id"):
            c.list(array_id="job-1")
    assert [e.array_index for e in elements] == [0, 1, 2]
    assert scheduler.service.calls[0][1].array_id == "arr-0123456789ab"


PIPELINE = {
    "evaluate": {"command": ["python", "eval.py"], "after": [("train", "any"), "job-external"]},
    "prepare": {"command": ["python", "prepare.py"], "time_limit_seconds": 600},
    "train": {"command": ["python", "train.py"], "after": ["prepare"], "array": {"LR": ["1e-3", "1e-4"]},
              "resources": {"gpus": 8}},
}


def test_a_dag_goes_in_order_with_ids_in_place_of_names(no_login, scheduler, idempotent):
    with client_for(scheduler) as c:
        done = c.submit_dag(PIPELINE, request_id="nightly-7", tenant="acme")
    assert list(done) == ["prepare", "train", "evaluate"]
    assert [r.client_request_id for r in idempotent.sent] == ["nightly-7/prepare", "nightly-7/train",
                                                              "nightly-7/evaluate"]
    assert [r.spec.name for r in idempotent.sent] == ["prepare", "train", "evaluate"]
    assert {r.tenant for r in idempotent.sent} == {"acme"}
    prepare, train, evaluate = idempotent.sent
    assert prepare.spec.time_limit_seconds == 600
    assert [d.job_id for d in train.spec.after] == ["job-000000000001"] and train.array.count == 2
    assert [(d.job_id, d.on) for d in evaluate.spec.after] == [("arr-000000000002", job_pb2.AFTER_ANY),
                                                               ("job-external", job_pb2.AFTER_SUCCESS)]
    assert done["train"].id == "arr-000000000002" and done["evaluate"].id == "job-000000000003"


def test_a_dag_stopped_part_way_goes_on_when_called_again(no_login, scheduler, idempotent):
    idempotent.refuse = "evaluate"
    with client_for(scheduler) as c:
        with pytest.raises(gpucloud.FailedPrecondition, match="after 2 of 3 were accepted") as stopped:
            c.submit_dag(PIPELINE)
        assert list(stopped.value.submitted) == ["prepare", "train"]
        base = stopped.value.request_id
        idempotent.refuse = None
        done = c.submit_dag(PIPELINE, request_id=base)
    assert done["prepare"].duplicate and done["train"].duplicate and not done["evaluate"].duplicate
    assert len(idempotent.sent) == 3


@pytest.mark.parametrize("jobs, message", [
    ({"a": {"command": ["x"], "after": ["b"]}, "b": {"command": ["x"], "after": ["a"]}}, r"a cycle, a -> b -> a"),
    ({"a": {"command": ["x"], "after": ["c"]}, "b": {"command": ["x"], "after": ["a"]},
      "c": {"command": ["x"], "after": ["job-1", "b"]}}, r"jobs\['b'\].after: a cycle, a -> c -> b -> a"),
    ({"a": {"command": ["x"], "after": ["a"]}}, r"a cycle, a -> a"),
    ({"a": {"command": ["x"]}, "b": {"command": ["x"], "after": ["trian"]}},
     r"jobs\['b'\].after: 'trian' is no job of these \(a, b\)"),
    ({}, "a non-empty mapping"),
    ({"a": {"command": ["x"], "tenant": "acme"}}, "tenant is submit_dag's argument"),
])
def test_a_bad_graph_raises_before_anything_is_sent(no_login, scheduler, idempotent, jobs, message):
    with client_for(scheduler) as c, pytest.raises(ValueError, match=message):
        c.submit_dag(jobs)
    assert idempotent.sent == []


def test_a_bad_job_anywhere_in_a_dag_sends_nothing(no_login, scheduler, idempotent):
    jobs = dict(PIPELINE, last={"command": ["x"], "resources": {"gpu": 1}, "after": ["evaluate"]})
    with client_for(scheduler) as c, pytest.raises(gpucloud.SpecError, match="unknown field 'gpu'"):
        c.submit_dag(jobs)
    assert idempotent.sent == []


def test_a_long_name_gets_a_request_id_that_fits():
    from gpucloud import dag
    rid = dag.request_id("r" * 90, "n" * 20, True)
    assert len(rid) <= 100 and rid.startswith("dag-") and rid == dag.request_id("r" * 90, "n" * 20, True)
    assert dag.request_id("r" * 90, "n" * 20, False) == "r" * 90 + "/" + "n" * 20
