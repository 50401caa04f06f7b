"""Job descriptions read as docs/jobspec.md says, and every kind of mistake named with its field."""
import datetime

import pytest

from gpucloud import SpecError, job_spec
from gpucloud.v1 import job_pb2


def test_the_documented_example_in_every_unit():
    request = job_spec({
        "name": "llama-ft", "tenant": "acme", "request_id": "llama-ft-2026-12", "workers": 2,
        "resources": {"gpus": 8, "cpu": 16, "memory": "256Gi", "gpu_models": ["A100-SXM4-80GB", "H100-SXM5-80GB"],
                      "min_gpu_memory": "80Gi"},
        "interconnect": "rdma", "capacity": "spot-preferred", "priority": "high",
        "checkpoint": {"every": "30m", "to": "s3://ckpt/llama-ft"}, "runtime_estimate": "6h30m",
        "deadline": "2026-12-24T18:00:00+01:00", "price_ceiling": 85.50,
        "env": {"EPOCHS": "3", "DATASET": "s3://data/alpaca"}, "secret_env": ["HF_TOKEN"],
        "command": ["torchrun", "--nproc-per-node=8", "train.py"]}, environment={"HF_TOKEN": "hf_x"})
    spec = request.spec
    assert (request.tenant, request.request_id) == ("acme", "llama-ft-2026-12")
    assert spec.name == "llama-ft" and spec.workers == 2 and spec.gpus_per_worker == 8
    assert spec.cpu_millis_per_worker == 16000 and spec.memory_mib_per_worker == 256 * 1024
    assert list(spec.gpu_models) == ["A100-SXM4-80GB", "H100-SXM5-80GB"] and spec.min_gpu_memory_mib == 80 * 1024
    assert spec.interconnect == job_pb2.INTERCONNECT_RDMA and spec.capacity == job_pb2.CAPACITY_SPOT_PREFERRED
    assert spec.priority == job_pb2.PRIORITY_HIGH
    assert spec.checkpoint.interval_seconds == 1800 and spec.checkpoint.location == "s3://ckpt/llama-ft"
    assert spec.runtime_estimate_seconds == 6 * 3600 + 30 * 60
    assert spec.deadline.ToDatetime() == datetime.datetime(2026, 12, 24, 17, 0, 0)
    assert spec.price_ceiling_micros_per_hour == 85_500_000
    assert dict(spec.env) == {"EPOCHS": "3", "DATASET": "s3://data/alpaca"}
    assert dict(spec.secret_env) == {"HF_TOKEN": "hf_x"}
    assert list(spec.command) == ["torchrun", "--nproc-per-node=8", "train.py"]


def test_keywords_alone_and_defaults():
    spec = job_spec(command="python prepare.py && torchrun train.py").spec
    assert list(spec.command) == ["/bin/sh", "-c", "python prepare.py && torchrun train.py"]
    assert spec.name == "python" and spec.workers == 1 and spec.gpus_per_worker == 1


def test_keywords_win_over_the_dict():
    assert job_spec({"command": ["sleep", "5"], "workers": 4}, workers=2).spec.workers == 2


@pytest.mark.parametrize("resources, gpus, mig, milli", [
    ({"mig": "1g.10gb"}, 0, "1g.10gb", 0),
    ({"milli_gpu": 250}, 0, "", 250),
    ({"gpus": 0}, 0, "", 0),
])
def test_mig_or_a_fraction_means_no_whole_gpu_by_default(resources, gpus, mig, milli):
    spec = job_spec(command=["x"], resources=resources).spec
    assert (spec.gpus_per_worker, spec.mig_profile, spec.milli_gpu) == (gpus, mig, milli)


@pytest.mark.parametrize("cpu, millis", [(4, 4000), (0.5, 500), ("500m", 500), ("2", 2000), (1000, 1_000_000)])
def test_cpu_in_cores_or_millicores(cpu, millis):
    assert job_spec(command=["x"], resources={"cpu": cpu}).spec.cpu_millis_per_worker == millis


@pytest.mark.parametrize("text, secs", [("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400), (45, 45),
                                        (datetime.timedelta(minutes=2), 120)])
def test_durations(text, secs):
    assert job_spec(command=["x"], runtime_estimate=text).spec.runtime_estimate_seconds == secs


@pytest.mark.parametrize("words", ["SPOT", "Spot_Preferred", " on-demand "])
def test_words_in_any_case_with_dash_or_underscore(words):
    job_spec(command=["x"], capacity=words)


def test_an_aware_datetime_is_a_deadline():
    at = datetime.datetime(2026, 12, 24, 18, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert job_spec(command=["x"], deadline=at).spec.deadline.ToDatetime() == datetime.datetime(2026, 12, 24, 17)


@pytest.mark.parametrize("description, message", [
    ({"command": ["x"], "resources": {"gpu": 1}},
     "unknown field 'gpu' in resources (fields there: cpu, gpu_models, gpus, memory, mig, milli_gpu, min_gpu_memory)"),
    ({"command": ["x"], "gpus": 1}, "unknown field 'gpus' (fields there: "),
    ({"command": ["x"], "array": {"count": 64}}, "'array' is an argument of Client.submit"),
    ({"command": ["x"], "after": [{"job": "j", "on": "success"}]}, "'after' is an argument of Client.submit"),
    ({"command": ["x"], "time_limit": "2d"}, "time_limit"),
    ({"command": ["x"], "resources": {"memory": "64GB"}},
     "resources.memory: '64GB' is not an amount of memory: write it with its unit, e.g. 512Mi, 64Gi or 1Ti"),
    ({"command": ["x"], "resources": {"memory": 64}}, "resources.memory: '64' is not an amount of memory"),
    ({"command": ["x"], "workers": 2.5}, "workers: '2.5' is not a whole number"),
    ({"command": ["x"], "workers": "two"}, "workers: expected a whole number, not 'two'"),
    ({"command": ["x"], "workers": True}, "workers: expected a whole number"),
    ({"command": ["x"], "workers": 0}, "workers: at least 1, is 0"),
    ({"command": ["x"], "resources": {"gpus": -1}}, "resources.gpus: 0 or more, is -1"),
    ({"command": ["x"], "resources": {"milli_gpu": 1000}}, "resources.milli_gpu: 1..999 (thousandths of one GPU)"),
    ({"command": ["x"], "resources": {"cpu": "lots"}}, "resources.cpu: 'lots' is not a CPU amount"),
    ({"command": ["x"], "resources": {"cpu": 0.0001}}, "resources.cpu: '0.0001' is not a CPU amount"),
    ({"command": ["x"], "resources": {"cpu": -2}}, "resources.cpu: '-2' is not a CPU amount"),
    ({"command": ["x"], "resources": {"gpu_models": "A100"}}, "resources.gpu_models: expected a list"),
    ({"command": ["x"], "resources": 8}, "resources: expected a mapping of fields, not 8"),
    ({"command": ["x"], "interconnect": "infiniband"},
     "interconnect: 'infiniband' is not one of none, nvlink, rdma (any case)"),
    ({"command": ["x"], "priority": "urgent"}, "priority: 'urgent' is not one of low, normal, high"),
    ({"command": ["x"], "capacity": "reserved"}, "capacity: 'reserved' is not one of on-demand, spot, spot-preferred"),
    ({"command": ["x"], "checkpoint": {"to": "s3://b"}}, "checkpoint.every: how often the job checkpoints"),
    ({"command": ["x"], "checkpoint": {"every": "often"}}, "checkpoint.every: 'often' is not a duration"),
    ({"command": ["x"], "runtime_estimate": "2 days"}, "runtime_estimate: '2 days' is not a duration"),
    ({"command": ["x"], "runtime_estimate": "9000h"}, "runtime_estimate: '9000h' is more than a year"),
    ({"command": ["x"], "deadline": "2026-12-24T18:00:00"},
     "deadline: '2026-12-24T18:00:00' is not a moment: ISO 8601 with its offset"),
    ({"command": ["x"], "deadline": datetime.datetime(2026, 12, 24)}, "deadline: "),
    ({"command": ["x"], "price_ceiling": "cheap"}, "price_ceiling: 'cheap' is not a price"),
    ({"command": ["x"], "price_ceiling": 0}, "price_ceiling: '0' is not a price"),
    ({"command": ["x"], "price_ceiling": "0.0000001"}, "at most 6 decimals"),
    ({"command": ["x"], "env": {"A": None}}, "env.A: no value (write \"\" for an empty one)"),
    ({"command": ["x"], "env": ["A=1"]}, "env: expected a mapping of NAME: value"),
    ({"command": ["x"], "secret_env": ["NOT_IN_ENV"]},
     "secret_env: your environment has no variable NOT_IN_ENV (export it before submitting)"),
    ({"command": ["x"], "secret_env": ["bad name"]}, "secret_env: a list of variable names"),
    ({"command": ["x"], "secret_env": "HF_TOKEN"}, "secret_env: a list of variable names"),
    ({}, "command: every job has one"),
    ({"command": ""}, "command: an empty command"),
    ({"command": []}, "command: a list of words ([python, train.py]) or a string for /bin/sh -c, not an empty list"),
    ({"command": ["python", None]}, "command: each word of the command is a string, one is None"),
    ({"command": {"run": "x"}}, "command: a list of words"),
    ({"command": ["x"], "request_id": ""}, "request_id: 1..128 characters"),
    ({"command": ["x"], "name": 7}, "name: expected a string, not 7"),
])
def test_a_mistake_is_one_error_naming_the_field(description, message):
    with pytest.raises(SpecError) as raised:
        job_spec(description, environment={})
    assert message in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_a_description_that_is_not_a_mapping():
    with pytest.raises(SpecError, match="a job is a mapping of fields"):
        job_spec(["sleep", "5"])


def test_a_secret_listed_twice():
    with pytest.raises(SpecError, match="HF_TOKEN is listed twice"):
        job_spec(command=["x"], secret_env=["HF_TOKEN", "HF_TOKEN"], environment={"HF_TOKEN": "v"})


def test_a_value_with_control_characters_is_clipped_to_one_line():
    with pytest.raises(SpecError) as raised:
        job_spec(command=["x"], resources={"memory": "64\nGB" + "x" * 100})
    assert "\n" not in str(raised.value) and "..." in str(raised.value)
