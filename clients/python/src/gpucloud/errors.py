"""What can go wrong talking to gpucloud, as exceptions whose message says what is wrong and what to do."""


class GpucloudError(Exception):
    """Any failure of a gpucloud call; ``code`` is the gRPC status name where the scheduler answered one."""

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class SpecError(GpucloudError, ValueError):
    """A job described wrongly: the message names the field and what it takes; nothing was sent."""

    code = "INVALID_ARGUMENT"


class NotAuthenticated(GpucloudError):
    """No token, or one the scheduler does not take (expired, another issuer's): log in again."""

    code = "UNAUTHENTICATED"


class PermissionDenied(GpucloudError):
    """The token's roles do not allow the call."""

    code = "PERMISSION_DENIED"


class NotFound(GpucloudError):
    """No such job for this tenant (another tenant's job is not found, too)."""

    code = "NOT_FOUND"


class InvalidArgument(GpucloudError):
    """The scheduler refused the request; the message names the field at fault."""

    code = "INVALID_ARGUMENT"


class QuotaExceeded(GpucloudError):
    """The tenant's quota does not hold the job (RESOURCE_EXHAUSTED)."""

    code = "RESOURCE_EXHAUSTED"


class FailedPrecondition(GpucloudError):
    """The call does not fit the job's state (e.g. logs of a job that never ran)."""

    code = "FAILED_PRECONDITION"


class SchedulerUnavailable(GpucloudError):
    """No scheduler instance took the call: none listening, or no leader within the failover time."""

    code = "UNAVAILABLE"


class DeadlineExceeded(GpucloudError):
    """The scheduler did not answer within the call's deadline."""

    code = "DEADLINE_EXCEEDED"


class Unimplemented(GpucloudError):
    """The scheduler does not offer this call yet (an older version than this client)."""

    code = "UNIMPLEMENTED"


class CheckpointError(GpucloudError):
    """gpucloud.checkpoint was used wrongly, or its marker file could not be written."""
