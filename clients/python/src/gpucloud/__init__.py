"""gpucloud: submit, follow and checkpoint GPU jobs from Python (docs/python.md).

    import gpucloud
    with gpucloud.Client() as c:                      # GPUCLOUD_SCHEDULER, else localhost:8081; `gpucloud login`'s token
        job = c.submit(command=["python", "train.py"], resources={"gpus": 1, "memory": "16Gi"})
        for event in c.watch(job.job_id):
            print(gpucloud.state_name(event.state), event.reason)
"""
from .arrays import array_of, dependencies
from .client import Client, LogLine, Submitted, parse_addresses, state_name
from .errors import (CheckpointError, DeadlineExceeded, FailedPrecondition, GpucloudError, InvalidArgument,
                     NotAuthenticated, NotFound, PermissionDenied, QuotaExceeded, SchedulerUnavailable, SpecError,
                     Unimplemented)
from .spec import JobRequest, job_spec

__all__ = ["Client", "LogLine", "Submitted", "array_of", "dependencies", "JobRequest", "job_spec", "parse_addresses", "state_name", "GpucloudError",
           "SpecError", "NotAuthenticated", "PermissionDenied", "NotFound", "InvalidArgument", "QuotaExceeded",
           "FailedPrecondition", "SchedulerUnavailable", "DeadlineExceeded", "Unimplemented", "CheckpointError"]
