"""The scheduler's JobService from Python: submit, get, list, watch, logs and cancel a job.

The server is the argument, else GPUCLOUD_SCHEDULER, else localhost:8081 (several comma-separated: one leader,
the rest standbys, as the CLI takes them); TLS when a CA file is given (argument or GPUCLOUD_CA_FILE), else
plaintext; the token is the one `gpucloud login` stored (gpucloud.credentials). Every unary call has a deadline.
A call that meets a standby (UNAVAILABLE naming the leader in the gpucloud-leader trailer) or an instance that
is down moves on, as the CLI's LeaderFailover does; writes are idempotent (SubmitJob keeps one request id).
"""
import datetime
import os
import time
import uuid
from dataclasses import dataclass

import grpc

from . import credentials, errors
from .failover import Attempts, first_line, parse_addresses, unreachable
from . import dag
from .arrays import array_of, dependencies
from .spec import JobRequest, job_spec

DEFAULT_SCHEDULER = "localhost:8081"
DEFAULT_TIMEOUT = 30.0
DEFAULT_FAILOVER_TIMEOUT = 30.0


def _pb():
    from .v1 import job_pb2, job_pb2_grpc
    return job_pb2, job_pb2_grpc


@dataclass(frozen=True)
class LogLine:
    """One line a worker wrote, with where it came from (the contract's LogChunk and LogLine in one)."""

    job_id: str
    allocation_id: str
    rank: int
    stream: str          # "stdout" or "stderr"
    node_id: str
    at: datetime.datetime
    text: str
    continued: bool      # the line goes on in the next one (lines over 64 KiB are split)
    offset: int
    dropped_lines: int   # > 0: the agent left out this many lines before this one (rate limit)
    dropped_bytes: int


@dataclass(frozen=True)
class Submitted:
    """What submitting an array (or a job of a DAG) gave: the job (an array's element 0), the array's id and
    size (empty and 0 for a single job), whether the request id had been seen, and the request id sent."""

    job: object
    array_id: str = ""
    array_count: int = 0
    duplicate: bool = False
    request_id: str = ""

    @property
    def id(self):
        """What a dependent names: the array's id for an array, else the job's."""
        return self.array_id or self.job.job_id


class Client:
    """A connection to the scheduler; close() it, or use it as a context manager."""

    def __init__(self, scheduler=None, ca_file=None, profile=None, token=None, timeout=DEFAULT_TIMEOUT,
                 failover_timeout=DEFAULT_FAILOVER_TIMEOUT, notices=None):
        self.addresses = parse_addresses(scheduler if scheduler is not None
                                         else os.environ.get("GPUCLOUD_SCHEDULER") or DEFAULT_SCHEDULER)
        self.scheduler = ",".join(self.addresses)
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0):
            raise ValueError("timeout: seconds above 0 for each call, was %r" % (timeout,))
        if not (isinstance(failover_timeout, (int, float)) and failover_timeout >= 0):
            raise ValueError("failover_timeout: seconds >= 0, was %r" % (failover_timeout,))
        self.timeout = float(timeout)
        self.failover_timeout = float(failover_timeout)
        self.notices = notices or (lambda line: None)
        ca_file = ca_file if ca_file is not None else (os.environ.get("GPUCLOUD_CA_FILE") or None)
        self._credentials = None
        if ca_file:
            try:
                with open(ca_file, "rb") as f:
                    pem = f.read()
            except OSError as e:
                raise errors.GpucloudError("ca_file: cannot read %s (%s)" % (ca_file, e.strerror or e)) from None
            if b"-----BEGIN CERTIFICATE-----" not in pem:
                raise errors.GpucloudError("ca_file: %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
                                           % ca_file)
            self._credentials = grpc.ssl_channel_credentials(root_certificates=pem)
        self.ca_file = ca_file
        self.profile = credentials.profile_name(profile)
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise ValueError("token: a bearer token (a JWT), was %r" % (token,))
        self._token = token.strip() if token else credentials.token(self.profile, ca_file, self.notices)
        self._token_source = "the token given" if token else credentials.describe_source(self.profile)
        self._channels = {}
        self._current = self.addresses[0]

    # ---- the API

    def submit(self, description=None, *, tenant=None, request_id=None, array=None, after=None,
               time_limit_seconds=None, **fields):
        """Submits a job described as docs/jobspec.md says (a dict, keyword arguments, or a JobRequest from
        gpucloud.job_spec). Returns the Job; repeating a request_id returns the first job.

        array: a count (16) or a grid ({"LR": ["1e-3", "1e-4"], "BATCH": [32, 64]}): the spec is submitted as
        that many jobs, all or none, and a :class:`Submitted` comes back (``.job`` is element 0, ``.array_id``
        what ``list(array_id=...)`` and dependents take). after: job or array ids it runs after, each "job-1",
        ("arr-2", "any") or a Dependency (it waits as WAITING_FOR_DEPENDENCIES). time_limit_seconds: the most
        running time it may use (0 or None: none)."""
        if isinstance(description, dict) and ("array" in description or "after" in description):
            description = dict(description)
            array = description.pop("array", None) if array is None else array
            after = description.pop("after", None) if after is None else after
        return self._submit(description, tenant, request_id, array, after, time_limit_seconds, fields,
                            whole=array is not None)

    def _submit(self, description, tenant, request_id, array, after, time_limit_seconds, fields, whole):
        if isinstance(description, JobRequest):
            if fields:
                raise errors.SpecError("submit: a JobRequest, or fields, not both")
            request = description
        else:
            request = job_spec(description, **fields)
        job_pb2, _ = _pb()
        spec = job_pb2.JobSpec()
        spec.CopyFrom(request.spec)
        spec.after.extend(dependencies(after))
        if time_limit_seconds is not None:
            if isinstance(time_limit_seconds, bool) or not isinstance(time_limit_seconds, int) or not \
                    0 <= time_limit_seconds <= 366 * 24 * 3600:
                raise errors.SpecError("time_limit_seconds: whole seconds, 0 (none) up to a year, was %r"
                                       % (time_limit_seconds,))
            spec.time_limit_seconds = time_limit_seconds
        message = job_pb2.SubmitJobRequest(
            tenant=tenant if tenant is not None else (request.tenant or ""),
            client_request_id=request_id if request_id is not None else (request.request_id or
                                                                           "py-" + uuid.uuid4().hex),
            spec=spec)
        longest = 128
        if array is not None:
            message.array.CopyFrom(array_of(array))
            longest = 100
        if not 1 <= len(message.client_request_id) <= longest:
            raise errors.SpecError("request_id: 1..%d characters%s, is %d" % (
                longest, " for an array" if array is not None else "", len(message.client_request_id)))
        response = self._unary("SubmitJob", message)
        if not whole:
            return response.job
        return Submitted(response.job, response.array_id, response.array_count, response.duplicate,
                         message.client_request_id)

    def submit_dag(self, jobs, *, tenant=None, request_id=None):
        """Submits named jobs that run after one another: ``{"prepare": {...}, "train": {"after": ["prepare"],
        "array": {"LR": [...]}, ...}}``, each a description as submit takes (with ``array``, ``after`` and
        ``time_limit_seconds`` among its fields), where an ``after`` entry may name another job of ``jobs``.

        Every name and the graph are checked first (ValueError naming a cycle, "a -> b -> a", or an unknown name);
        then each job is submitted after those it names, with their ids in place of the names. Each request id is
        ``request_id/name`` (request_id: given, else generated), so calling again with the same request_id after a
        failure part-way gets the jobs already accepted back and goes on. Returns {name: Submitted}, in the order
        submitted; a failure raises the GpucloudError with ``.submitted`` (those accepted) and ``.request_id``."""
        names, needs = dag.order(jobs)
        base = request_id if request_id is not None else "py-dag-" + uuid.uuid4().hex
        if not isinstance(base, str) or not base:
            raise ValueError("request_id: a non-empty string, was %r" % (base,))
        prepared = {}
        for name in names:
            description = dict(jobs[name])
            array = description.pop("array", None)
            after = description.pop("after", None)
            limit = description.pop("time_limit_seconds", None)
            for forbidden in ("tenant", "request_id"):
                if forbidden in description:
                    raise ValueError("jobs[%r]: %s is submit_dag's argument, for all its jobs" % (name, forbidden))
            description.setdefault("name", name)
            # built before anything is sent: a mistake in the last job sends nothing
            job_spec(description)
            prepared[name] = (description, array, dependencies(after, "jobs[%r].after" % name), limit)
        done = {}
        for name in names:
            description, array, after, limit = prepared[name]
            resolved = []
            for d in after:
                if d.job_id in needs[name]:
                    d = type(d)(job_id=done[d.job_id].id, on=d.on)
                resolved.append(d)
            try:
                rid = dag.request_id(base, name, array is not None)
                done[name] = self._submit(description, tenant, rid, array, resolved, limit, {}, whole=True)
            except errors.GpucloudError as e:
                e.submitted = dict(done)
                e.request_id = base
                e.args = ("%s (submitting %r, after %d of %d were accepted; submit_dag(..., request_id=%r) again"
                          " goes on without duplicates)" % (e.args[0] if e.args else e, name, len(done), len(names),
                                                             base),) + tuple(e.args[1:])
                raise
        return done

    def get(self, job_id):
        """One job: its spec, state, reason, placement and times. NotFound for an unknown (or another tenant's) id."""
        job_pb2, _ = _pb()
        return self._unary("GetJob", job_pb2.GetJobRequest(job_id=_job_id(job_id)))

    def list(self, tenant=None, states=None, limit=None, page_size=100, array_id=None):
        """Jobs newest first, every page of them up to limit; states: names such as "running" or JobState values.
        array_id: only that array's elements, in index order."""
        job_pb2, _ = _pb()
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError("limit: a whole number of jobs >= 1, or None for all, was %r" % (limit,))
        if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 500:
            raise ValueError("page_size: 1..500, was %r" % (page_size,))
        if tenant is not None and not isinstance(tenant, str):
            raise ValueError("tenant: a tenant id, was %r" % (tenant,))
        if array_id is not None and (not isinstance(array_id, str) or not array_id.strip().startswith("arr-")):
            raise ValueError("array_id: an array's id (arr-...), was %r" % (array_id,))
        wanted = [_state(s) for s in ([states] if isinstance(states, (str, int)) else (states or []))]
        jobs, token = [], ""
        while True:
            size = page_size if limit is None else min(page_size, limit - len(jobs))
            page = self._unary("ListJobs", job_pb2.ListJobsRequest(tenant=tenant or "", states=wanted,
                                                                    page_size=size, page_token=token,
                                                                    array_id=(array_id or "").strip()))
            jobs.extend(page.jobs)
            token = page.next_page_token
            if not token or (limit is not None and len(jobs) >= limit):
                return jobs[:limit] if limit is not None else jobs

    def cancel(self, job_id, reason=""):
        """Cancels a job that has not ended (an ended one comes back unchanged). Returns the Job."""
        job_pb2, _ = _pb()
        if not isinstance(reason, str):
            raise ValueError("reason: a string, was %r" % (reason,))
        return self._unary("CancelJob", job_pb2.CancelJobRequest(job_id=_job_id(job_id), reason=reason))

    def watch(self, job_id, timeout=None):
        """The job's lifecycle events (JobEvent): its current state first, then each change, until it ends. A
        broken stream is re-opened (each event is yielded once); timeout: seconds for the whole watch."""
        job_pb2, _ = _pb()
        return self._watch(job_pb2.WatchJobRequest(job_id=_job_id(job_id)), _ends(timeout))

    def _watch(self, request, ends):
        seen = set()
        attempts = Attempts(self)
        while True:
            try:
                for event in self._stream("WatchJob", request, ends):
                    attempts.progressed()
                    key = event.SerializeToString(deterministic=True)
                    if key not in seen:
                        seen.add(key)
                        yield event
                return
            except grpc.RpcError as e:
                attempts.failed(e, "WatchJob")

    def logs(self, job_id, follow=False, rank=None, since=None, stream=None, timeout=None):
        """What the job's workers wrote (LogLine), oldest first; follow: until the job has ended and every worker's
        output is in. rank: one worker's; since: an aware datetime, or a timedelta meaning that long ago; stream:
        "stdout" or "stderr". A broken stream is re-opened where it broke."""
        job_pb2, _ = _pb()
        if not isinstance(follow, bool):
            raise ValueError("follow: True or False, was %r" % (follow,))
        request = job_pb2.StreamLogsRequest(job_id=_job_id(job_id), follow=follow)
        if rank is not None:
            if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
                raise ValueError("rank: a worker's rank, 0 or more, was %r" % (rank,))
            request.rank = rank
        if since is not None:
            request.since.FromDatetime(_since(since).replace(tzinfo=None))
        if stream is not None:
            names = {"stdout": job_pb2.LOG_STDOUT, "stderr": job_pb2.LOG_STDERR}
            if not isinstance(stream, str) or stream.strip().lower() not in names:
                raise ValueError("stream: 'stdout' or 'stderr' (None: both), was %r" % (stream,))
            request.stream = names[stream.strip().lower()]
        return self._logs(request, _ends(timeout))

    def _logs(self, request, ends):
        job_pb2, _ = _pb()
        last = {}
        attempts = Attempts(self)
        while True:
            try:
                for chunk in self._stream("StreamLogs", request, ends):
                    attempts.progressed()
                    key = (chunk.allocation_id, chunk.stream)
                    name = "stderr" if chunk.stream == job_pb2.LOG_STDERR else "stdout"
                    for line in chunk.lines:
                        if key in last and line.offset <= last[key]:
                            continue  # sent before the stream broke
                        last[key] = line.offset
                        yield LogLine(chunk.job_id, chunk.allocation_id, chunk.rank, name, chunk.node_id,
                                      line.at.ToDatetime().replace(tzinfo=datetime.timezone.utc), line.text,
                                      line.continued, line.offset, line.dropped_lines, line.dropped_bytes)
                return
            except grpc.RpcError as e:
                # re-opened as asked; the lines at or before each stream's last offset seen are skipped
                attempts.failed(e, "StreamLogs")

    def close(self):
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- calls

    def _channel(self):
        channel = self._channels.get(self._current)
        if channel is None:
            channel = (grpc.secure_channel(self._current, self._credentials) if self._credentials is not None
                       else grpc.insecure_channel(self._current))
            self._channels[self._current] = channel
        return channel

    def _metadata(self):
        return (("authorization", "Bearer " + self._token),) if self._token else ()

    def _method(self, name):
        _, job_pb2_grpc = _pb()
        return getattr(job_pb2_grpc.JobServiceStub(self._channel()), name)

    def _unary(self, name, request):
        attempts = Attempts(self)
        while True:
            try:
                return self._method(name)(request, timeout=self.timeout, metadata=self._metadata())
            except grpc.RpcError as e:
                attempts.failed(e, name)

    def _stream(self, name, request, ends):
        remaining = None if ends is None else max(0.001, ends - time.monotonic())
        return self._method(name)(request, timeout=remaining, metadata=self._metadata())

    def error(self, rpc_error, what):
        """The GpucloudError that a grpc error means, in words that say what to do."""
        code = rpc_error.code() if hasattr(rpc_error, "code") else None
        details = first_line(rpc_error.details() if hasattr(rpc_error, "details") else str(rpc_error))
        name = code.name if code is not None else "UNKNOWN"
        at = "the scheduler at " + self._current
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return errors.NotAuthenticated(
                "%s refused %s with %s: %s; run `gpucloud login` (on a stack ./gpucloud up started: `./gpucloud login"
                " --dev --tenant T --role member`), or set GPUCLOUD_TOKEN" % (at, self._token_source, name, details)
                if self._token else
                "no token: GPUCLOUD_TOKEN is not set and %s has none; run `gpucloud login` (on a stack ./gpucloud up"
                " started: `./gpucloud login --dev --tenant T --role member`) (%s said: %s)"
                % (credentials.describe_source(self.profile), at, details))
        if code == grpc.StatusCode.UNAVAILABLE:
            reason = unreachable(details)
            if reason:
                return errors.SchedulerUnavailable(
                    "cannot reach the scheduler at %s (%s); start the stack with ./gpucloud up, or point"
                    " Client(scheduler=...) or GPUCLOUD_SCHEDULER at a running one" % (self.scheduler, reason))
            tls = "" if self.ca_file else ("; this client speaks plaintext: a scheduler that speaks TLS (as one"
                                           " ./gpucloud up starts) takes ca_file= or GPUCLOUD_CA_FILE"
                                           " (.run/tls/ca.pem)")
            return errors.SchedulerUnavailable("no scheduler at %s took %s within %.1f s (last, from %s: %s);"
                                               " ./gpucloud status shows each instance's role%s"
                                               % (self.scheduler, what, self.failover_timeout, self._current,
                                                  details, tls))
        if code == grpc.StatusCode.DEADLINE_EXCEEDED and what in ("WatchJob", "StreamLogs"):
            return errors.DeadlineExceeded("%s from %s had not ended when its timeout ran out; call again, or give"
                                           " a longer timeout (None: no limit)" % (what, at))
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return errors.DeadlineExceeded("%s did not answer %s within its deadline (%.1f s); it may be overloaded:"
                                           " retry, or raise Client(timeout=...)" % (at, what, self.timeout))
        kinds = {grpc.StatusCode.NOT_FOUND: errors.NotFound, grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDenied,
                 grpc.StatusCode.INVALID_ARGUMENT: errors.InvalidArgument,
                 grpc.StatusCode.RESOURCE_EXHAUSTED: errors.QuotaExceeded,
                 grpc.StatusCode.FAILED_PRECONDITION: errors.FailedPrecondition,
                 grpc.StatusCode.UNIMPLEMENTED: errors.Unimplemented}
        kind = kinds.get(code, errors.GpucloudError)
        extra = ""
        if code == grpc.StatusCode.UNIMPLEMENTED:
            extra = "; the scheduler at %s is older than this client" % self._current
        if not details:
            details = "(no message)"
        return kind("%s: %s%s" % (name, details, extra), name)


def _ends(timeout):
    """When a stream given ``timeout`` seconds in all must end (monotonic), or None for no limit."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError("timeout: seconds above 0 for the whole stream, or None for no limit, was %r" % (timeout,))
    return time.monotonic() + timeout


def _job_id(job_id):
    if not isinstance(job_id, str) or not job_id.strip():
        raise ValueError("job_id: a job's id (e.g. job-4276904ac3bd), was %r" % (job_id,))
    return job_id.strip()


def _state(value):
    job_pb2, _ = _pb()
    if isinstance(value, int) and not isinstance(value, bool) and value in job_pb2.JobState.values():
        return value
    if isinstance(value, str) and value.strip().upper() in job_pb2.JobState.keys() and value.strip():
        return job_pb2.JobState.Value(value.strip().upper())
    names = [n.lower() for n in job_pb2.JobState.keys() if not n.endswith("UNSPECIFIED")]
    raise ValueError("states: '%s' is not one of %s (any case)" % (value, ", ".join(names)))


def _since(value):
    if isinstance(value, datetime.timedelta):
        if value.total_seconds() < 0:
            raise ValueError("since: a timedelta means that long ago, 0 or more, was %s" % value)
        return datetime.datetime.now(datetime.timezone.utc) - value
    if isinstance(value, datetime.datetime) and value.tzinfo is not None and value.utcoffset() is not None:
        return value.astimezone(datetime.timezone.utc)
    raise ValueError("since: an aware datetime (with tzinfo) or a timedelta (that long ago), was %r" % (value,))


def state_name(value):
    """'RUNNING' for a JobState value (job.state)."""
    job_pb2, _ = _pb()
    return job_pb2.JobState.Name(value)
