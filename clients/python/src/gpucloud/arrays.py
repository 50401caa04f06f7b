"""Job arrays and dependencies in Python, with the CLI's rules (docs/jobspec.md, "Arrays" and "after").

``array_of(16)`` or ``array_of({"LR": ["1e-3", "1e-4"], "BATCH": [32, 64]})`` gives the contract's JobArray: one
spec submitted as many jobs, a grid's elements being every combination of the values (the last parameter varying
fastest); ``dependencies(["job-1", ("arr-2", "any")])`` gives the JobSpec's ``after`` entries. Each refuses what
the scheduler would (1..10,000 elements, at most 8 parameters, each a variable name with at least one value) with
a SpecError, before anything is sent.
"""
import decimal
import re

from .errors import SpecError

ARRAY_MAX = 10_000
PARAMETERS_MAX = 8
DEPENDENCIES_MAX = 64
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
OWN_PREFIX = "GPUCLOUD_ARRAY_"
ID = re.compile(r"(job|arr)-\S+\Z")


def _pb():
    from .v1 import job_pb2
    return job_pb2


def _value_text(value, name):
    if isinstance(value, bool) or value is None or isinstance(value, (list, tuple, dict, set)):
        raise SpecError("array: %s: each value is a string or a number, one is %r" % (name, value))
    if isinstance(value, (int, float, decimal.Decimal, str)):
        return str(value)
    raise SpecError("array: %s: each value is a string or a number, one is %r" % (name, value))


def array_of(array):
    """The JobArray of ``array``: a count (int), a grid ({NAME: [values]}), or the job file's form
    ({"count": n} / {"grid": {...}}, count then being the grid's product)."""
    pb = _pb()
    count, grid = None, None
    if isinstance(array, bool):
        raise SpecError("array: a count of elements (1..%d) or a grid {NAME: [values]}, was %r" % (ARRAY_MAX, array))
    if isinstance(array, int):
        count = array
    elif isinstance(array, dict) and set(array) and set(array) <= {"count", "grid"} and (
            "grid" in array or isinstance(array.get("count"), int)):
        count, grid = array.get("count"), array.get("grid")
        if grid is not None and not isinstance(grid, dict):
            raise SpecError("array: grid: a mapping of NAME: [values], was %r" % (grid,))
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise SpecError("array: count: a whole number of elements, was %r" % (count,))
    elif isinstance(array, dict):
        grid = array
    else:
        raise SpecError("array: a count of elements (1..%d) or a grid {NAME: [values]}, was %r" % (ARRAY_MAX, array))
    message = pb.JobArray()
    product = 1
    if grid is not None:
        if not grid:
            raise SpecError("array: the grid has no parameters: give each a list of values, e.g. {\"LR\": [1e-3]}")
        if len(grid) > PARAMETERS_MAX:
            raise SpecError("array: the grid has %d parameters; at most %d" % (len(grid), PARAMETERS_MAX))
        for name, values in grid.items():
            if not isinstance(name, str) or not VARIABLE.match(name) or len(name) > 128:
                raise SpecError("array: '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*): each element gets it"
                                " in its env" % (name,))
            if name.startswith(OWN_PREFIX):
                raise SpecError("array: %s is a name the scheduler gives every element itself (%sID, _INDEX,"
                                " _COUNT)" % (name, OWN_PREFIX))
            if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
                raise SpecError("array: %s: a list of values, was %r" % (name, values))
            if not values:
                raise SpecError("array: %s has no values (a list of at least one)" % name)
            message.parameters.add(name=name, values=[_value_text(v, name) for v in values])
            product *= len(values)
        if product > ARRAY_MAX:
            raise SpecError("array: the grid has %d combinations; an array has at most %d elements"
                            % (product, ARRAY_MAX))
    if count is not None and not 1 <= count <= ARRAY_MAX:
        raise SpecError("array: count is %d; an array has 1..%d elements" % (count, ARRAY_MAX))
    if grid is not None and count is not None and count != product:
        raise SpecError("array: count is %d but the grid has %d combinations; leave count out, or make it the"
                        " product" % (count, product))
    message.count = product if grid is not None else count
    return message


def _condition(word, where):
    pb = _pb()
    text = word.strip().lower().replace("_", "-") if isinstance(word, str) else None
    if text in ("success", "after-success"):
        return pb.AFTER_SUCCESS
    if text in ("any", "after-any"):
        return pb.AFTER_ANY
    if isinstance(word, int) and not isinstance(word, bool) and word in pb.DependencyCondition.values():
        return word
    raise SpecError("%s: '%s' is not one of success, any (success: it must succeed; any: any end will do)"
                    % (where, word))


def dependency(entry, where="after"):
    """(job_id, condition) of one entry: "job-1", ("arr-2", "any"), {"job": ..., "on": ...} or a Dependency."""
    pb = _pb()
    if isinstance(entry, pb.Dependency):
        return entry.job_id, entry.on or pb.AFTER_SUCCESS
    if isinstance(entry, str):
        job, on = entry, pb.AFTER_SUCCESS
    elif isinstance(entry, tuple) and len(entry) == 2:
        job, on = entry[0], _condition(entry[1], where)
    elif isinstance(entry, dict) and "job" in entry and set(entry) <= {"job", "on"}:
        job, on = entry["job"], _condition(entry.get("on", "success"), where)
    else:
        raise SpecError("%s: each entry is a job or array id, (id, \"any\"), {\"job\": id, \"on\": \"success\"|"
                        "\"any\"} or a Dependency, one is %r" % (where, entry))
    if not isinstance(job, str) or not job.strip():
        raise SpecError("%s: an entry names no job: %r" % (where, entry))
    return job.strip(), on


def dependencies(after, where="after"):
    """The JobSpec ``after`` entries (Dependency messages) of a list of entries (see :func:`dependency`)."""
    pb = _pb()
    if after is None:
        return []
    if isinstance(after, (str, dict, pb.Dependency)) or (isinstance(after, tuple) and len(after) == 2
                                                        and after[1] in ("any", "success")):
        after = [after]
    if not isinstance(after, (list, tuple)):
        raise SpecError("%s: a list of job or array ids, was %r" % (where, after))
    if len(after) > DEPENDENCIES_MAX:
        raise SpecError("%s: at most %d jobs, has %d" % (where, DEPENDENCIES_MAX, len(after)))
    return [pb.Dependency(job_id=job, on=on) for job, on in (dependency(e, where) for e in after)]
