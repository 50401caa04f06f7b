"""A job described in Python, with the schema and units of the CLI's job files (docs/jobspec.md).

``job_spec({"resources": {"gpus": 8, "memory": "64Gi"}, "command": ["python", "train.py"]})``, or the same as
keyword arguments, gives the contract's JobSpec; the rules are cli JobFile's: unknown fields, wrong types,
numbers with a fraction where a whole one goes and values without their unit are refused with a SpecError
that names the field and what it takes, before anything is sent.
"""
import datetime
import decimal
import os
import re
from dataclasses import dataclass

from .errors import SpecError

#: Fields issue 17 asks for that the scheduler has no state for yet: refused as such, not as "unknown". (array
#: and after are Client.submit's own arguments: gpucloud.arrays.)
TOP = ("name", "tenant", "request_id", "workers", "resources", "interconnect", "capacity", "priority",
       "checkpoint", "runtime_estimate", "time_limit", "deadline", "price_ceiling", "env", "secret_env", "command")
RESOURCES = ("gpus", "mig", "milli_gpu", "cpu", "memory", "gpu_models", "min_gpu_memory")
CHECKPOINT = ("every", "to")
MEMORY = re.compile(r"(\d+)\s*(Mi|Gi|Ti)\Z")
DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?\Z")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
YEAR_SECONDS = 366 * 24 * 3600


@dataclass(frozen=True)
class JobRequest:
    """What submit sends: the JobSpec, and the tenant and request id the description named (None: not named)."""

    spec: object
    tenant: object = None
    request_id: object = None


def _pb():
    from .v1 import job_pb2
    return job_pb2


def _clip(value, limit=64):
    text = str(value)
    text = re.sub(r"[\x00-\x1f\x7f]", "?", text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _fail(field, message):
    raise SpecError((field + ": " if field else "") + message)


def _mapping(value, field, known):
    if not isinstance(value, dict):
        _fail(field, "expected a mapping of fields, not %s" % _clip(repr(value)))
    for key in value:
        if not isinstance(key, str):
            _fail(field, "field names are strings, one is %s" % _clip(repr(key)))
        if key not in known:
            if not field and key in ("array", "after"):
                raise SpecError("'%s' is an argument of Client.submit (submit(..., %s=...)) and of submit_dag's"
                                " jobs, not of job_spec" % (key, key))
            raise SpecError("unknown field '%s'%s (fields there: %s)"
                            % (_clip(key), " in " + field if field else "", ", ".join(sorted(known))))
    return value


def _whole(value, field):
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) or isinstance(value, decimal.Decimal):
            _fail(field, "'%s' is not a whole number" % _clip(value))
        _fail(field, "expected a whole number, not %s" % _clip(repr(value)))
    return value


def _string(value, field):
    if not isinstance(value, str):
        _fail(field, "expected a string, not %s" % _clip(repr(value)))
    return value


def _scalar_text(value, field):
    """A string, or a number or boolean written as YAML would read it back as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float, decimal.Decimal)):
        return str(value)
    _fail(field, "expected a string, not %s" % _clip(repr(value)))


def _decimal(value):
    if isinstance(value, bool):
        raise decimal.InvalidOperation
    if isinstance(value, float):
        return decimal.Decimal(repr(value))
    if isinstance(value, (int, decimal.Decimal)):
        return decimal.Decimal(value)
    if isinstance(value, str):
        return decimal.Decimal(value.strip())
    raise decimal.InvalidOperation


def word(enum_type, prefix, value, field):
    """A contract enum from the word a person writes ("spot-preferred"): any case, '-' and '_' alike."""
    words = {}
    for name, number in enum_type.items():
        if name.startswith(prefix) and not name.endswith("_UNSPECIFIED"):
            words[name[len(prefix):].lower().replace("_", "-")] = number
    if isinstance(value, str) and value.strip().lower().replace("_", "-") in words:
        return words[value.strip().lower().replace("_", "-")]
    _fail(field, "'%s' is not one of %s (any case)" % (_clip(value), ", ".join(words)))


def memory_mib(value, field):
    """'64Gi', '512Mi', '1Ti' in MiB."""
    match = MEMORY.match(value.strip()) if isinstance(value, str) else None
    if not match:
        _fail(field, "'%s' is not an amount of memory: write it with its unit, e.g. 512Mi, 64Gi or 1Ti" % _clip(value))
    n = int(match.group(1))
    return n * {"Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}[match.group(2)]


def cpu_millis(value, field):
    """Cores (4, 0.5, "2") or millicores ("500m") in thousandths of a core."""
    try:
        if isinstance(value, str) and value.strip().endswith("m"):
            millis = decimal.Decimal(value.strip()[:-1])
        else:
            millis = _decimal(value).scaleb(3)
        if not millis.is_finite() or millis <= 0 or millis != millis.to_integral_value() or millis > 1_000_000:
            raise decimal.InvalidOperation
        return int(millis)
    except (decimal.InvalidOperation, ValueError):
        _fail(field, "'%s' is not a CPU amount: cores (4, 0.5) or millicores (500m), above 0 and at most 1000 cores"
              % _clip(value))


def seconds(value, field):
    """'90s', '30m', '2h', '1h30m', a whole number of seconds, or a datetime.timedelta of whole seconds."""
    if isinstance(value, datetime.timedelta):
        total = value.total_seconds()
        if total < 0 or total != int(total):
            _fail(field, "'%s' is not a duration of whole seconds, 0 or more" % value)
        total = int(total)
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        total = value
    else:
        text = value.strip() if isinstance(value, str) else ""
        match = DURATION.match(text) if text else None
        if not match:
            _fail(field, "'%s' is not a duration: e.g. 90s, 30m, 2h or 1h30m, or a whole number of seconds"
                  % _clip(value))
        hours, minutes, secs = (int(g) if g else 0 for g in match.groups())
        total = hours * 3600 + minutes * 60 + secs
    if total > YEAR_SECONDS:
        _fail(field, "'%s' is more than a year" % _clip(value))
    return total


def moment(value, field):
    """An aware datetime, or ISO 8601 with its offset ('2026-12-24T18:00:00Z'), as a UTC datetime."""
    at = value
    if isinstance(value, str):
        try:
            text = value.strip()
            # Python before 3.11 reads no "Z"
            at = datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
        except ValueError:
            at = None
    if not isinstance(at, datetime.datetime) or at.tzinfo is None or at.utcoffset() is None:
        _fail(field, "'%s' is not a moment: ISO 8601 with its offset, e.g. 2026-12-24T18:00:00Z"
              " (a datetime needs its tzinfo)" % _clip(value))
    return at.astimezone(datetime.timezone.utc)


def usd_micros(value, field):
    """US dollars (12.5, "12.50") in micro-USD."""
    try:
        usd = _decimal(value)
        if not usd.is_finite() or usd <= 0 or usd > 1_000_000:
            raise decimal.InvalidOperation
        micros = usd.scaleb(6)
        if micros != micros.to_integral_value():
            raise decimal.InvalidOperation
        return int(micros)
    except (decimal.InvalidOperation, ValueError):
        _fail(field, "'%s' is not a price: US dollars per job-hour above 0, at most 6 decimals, e.g. 12.50"
              % _clip(value))


def command_argv(value, field="command"):
    """(argv, shell): a list of words, or a string run by /bin/sh -c."""
    if isinstance(value, str):
        if not value.strip():
            _fail(field, "an empty command")
        return ["/bin/sh", "-c", value], True
    if isinstance(value, (list, tuple)) and value:
        argv = []
        for w in value:
            if w is None or isinstance(w, (list, tuple, dict, set)):
                _fail(field, "each word of the command is a string, one is %s" % _clip(repr(w)))
            argv.append(_scalar_text(w, field))
        return argv, False
    _fail(field, "a list of words ([python, train.py]) or a string for /bin/sh -c, not %s"
          % ("an empty list" if isinstance(value, (list, tuple)) else _clip(repr(value))))


def job_spec(description=None, environment=None, **fields):
    """The JobRequest a description (a dict, keyword arguments, or both: keywords win) asks for.

    ``environment`` gives the values of secret_env's names (default: os.environ; a description holds no secret).
    """
    merged = {}
    if description is not None:
        if not isinstance(description, dict):
            raise SpecError("a job is a mapping of fields (docs/jobspec.md), not %s" % _clip(repr(description)))
        merged.update(description)
    merged.update(fields)
    _mapping(merged, "", TOP)
    environment = os.environ if environment is None else environment
    pb = _pb()
    spec = pb.JobSpec()
    if merged.get("command") is None:
        _fail("command", "every job has one (a list of words, or a string run by /bin/sh -c)")
    argv, shell = command_argv(merged["command"])
    spec.command.extend(argv)
    name = merged.get("name")
    if name is not None and _string(name, "name").strip():
        spec.name = name
    else:
        first = argv[2 if shell else 0].split()
        spec.name = first[0] if first else argv[0]
    workers = 1 if merged.get("workers") is None else _whole(merged["workers"], "workers")
    if workers < 1:
        _fail("workers", "at least 1, is %d" % workers)
    spec.workers = workers
    resources = _mapping(merged.get("resources") or {}, "resources", RESOURCES)
    shared = resources.get("mig") is not None or resources.get("milli_gpu") is not None
    gpus = (0 if shared else 1) if resources.get("gpus") is None else _whole(resources["gpus"], "resources.gpus")
    if gpus < 0:
        _fail("resources.gpus", "0 or more, is %d" % gpus)
    spec.gpus_per_worker = gpus
    if resources.get("mig") is not None:
        spec.mig_profile = _string(resources["mig"], "resources.mig")
    if resources.get("milli_gpu") is not None:
        milli = _whole(resources["milli_gpu"], "resources.milli_gpu")
        if not 1 <= milli <= 999:
            _fail("resources.milli_gpu", "1..999 (thousandths of one GPU), is %d" % milli)
        spec.milli_gpu = milli
    if resources.get("cpu") is not None:
        spec.cpu_millis_per_worker = cpu_millis(resources["cpu"], "resources.cpu")
    if resources.get("memory") is not None:
        spec.memory_mib_per_worker = memory_mib(resources["memory"], "resources.memory")
    if resources.get("gpu_models") is not None:
        models = resources["gpu_models"]
        if isinstance(models, str) or not isinstance(models, (list, tuple)):
            _fail("resources.gpu_models", "expected a list, not %s" % _clip(repr(models)))
        spec.gpu_models.extend(_string(m, "resources.gpu_models") for m in models)
    if resources.get("min_gpu_memory") is not None:
        spec.min_gpu_memory_mib = memory_mib(resources["min_gpu_memory"], "resources.min_gpu_memory")
    if merged.get("interconnect") is not None:
        spec.interconnect = word(pb.Interconnect, "INTERCONNECT_", merged["interconnect"], "interconnect")
    if merged.get("capacity") is not None:
        spec.capacity = word(pb.CapacityPreference, "CAPACITY_", merged["capacity"], "capacity")
    if merged.get("priority") is not None:
        spec.priority = word(pb.PriorityClass, "PRIORITY_", merged["priority"], "priority")
    if merged.get("checkpoint") is not None:
        checkpoint = _mapping(merged["checkpoint"], "checkpoint", CHECKPOINT)
        if checkpoint.get("every") is None:
            _fail("checkpoint.every", "how often the job checkpoints (e.g. 30m) is needed with checkpoint")
        spec.checkpoint.interval_seconds = seconds(checkpoint["every"], "checkpoint.every")
        if checkpoint.get("to") is not None:
            spec.checkpoint.location = _string(checkpoint["to"], "checkpoint.to")
    if merged.get("runtime_estimate") is not None:
        spec.runtime_estimate_seconds = seconds(merged["runtime_estimate"], "runtime_estimate")
    if merged.get("time_limit") is not None:
        spec.time_limit_seconds = seconds(merged["time_limit"], "time_limit")
    if merged.get("deadline") is not None:
        spec.deadline.FromDatetime(moment(merged["deadline"], "deadline").replace(tzinfo=None))
    if merged.get("price_ceiling") is not None:
        spec.price_ceiling_micros_per_hour = usd_micros(merged["price_ceiling"], "price_ceiling")
    if merged.get("env") is not None:
        env = merged["env"]
        if not isinstance(env, dict):
            _fail("env", "expected a mapping of NAME: value, not %s" % _clip(repr(env)))
        for key, value in env.items():
            if not isinstance(key, str):
                _fail("env", "variable names are strings, one is %s" % _clip(repr(key)))
            if value is None:
                _fail("env." + _clip(key), "no value (write \"\" for an empty one)")
            spec.env[key] = _scalar_text(value, "env." + _clip(key))
    if merged.get("secret_env") is not None:
        names = merged["secret_env"]
        if isinstance(names, str) or not isinstance(names, (list, tuple)):
            _fail("secret_env", "a list of variable names whose values come from your environment, not %s"
                  % _clip(repr(names)))
        for variable in names:
            if not isinstance(variable, str) or not VARIABLE.match(variable):
                _fail("secret_env", "a list of variable names ([A-Za-z_][A-Za-z0-9_]*) whose values come from your"
                      " environment, has '%s'" % _clip(variable))
            if variable in spec.secret_env:
                _fail("secret_env", "%s is listed twice" % variable)
            value = environment.get(variable)
            if value is None:
                _fail("secret_env", "your environment has no variable %s (export it before submitting)" % variable)
            spec.secret_env[variable] = value
    tenant = merged.get("tenant")
    request_id = merged.get("request_id")
    if tenant is not None:
        _string(tenant, "tenant")
    if request_id is not None and not (isinstance(request_id, str) and 1 <= len(request_id) <= 128):
        _fail("request_id", "1..128 characters, is %s" % _clip(repr(request_id)))
    return JobRequest(spec=spec, tenant=tenant, request_id=request_id)
