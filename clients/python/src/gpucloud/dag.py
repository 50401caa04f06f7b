"""Jobs that run after one another, named: ``Client.submit_dag({"prepare": {...}, "train": {..., "after":
["prepare"]}})``. The scheduler only ever sees dependencies on jobs that exist, so it cannot see a cycle in such a
description: this is where one is caught, with every name checked, before anything is sent (as the CLI does for a
DAG file, docs/jobspec.md "DAG files")."""
import hashlib

from .arrays import ID, dependency

REQUEST_ID_MAX = 128
ARRAY_REQUEST_ID_MAX = 100


def order(jobs):
    """The names of ``jobs`` ({name: description with 'after'}) so that each comes after every job it names, else
    in the given order. ValueError naming the cycle ("a -> b -> a": each runs after the next) or the unknown name."""
    if not isinstance(jobs, dict) or not jobs:
        raise ValueError("jobs: a non-empty mapping of name: job description")
    needs = {}
    for name, description in jobs.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError("jobs: every job has a name (a non-empty string), one is %r" % (name,))
        if not isinstance(description, dict):
            raise ValueError("jobs[%r]: a job description (a dict of job_spec fields), was %r" % (name, description))
        after = description.get("after") or []
        entries = [after] if isinstance(after, (str, dict)) else list(after)
        needs[name] = []
        for entry in entries:
            job, _ = dependency(entry, "jobs[%r].after" % name)
            if job in jobs:
                needs[name].append(job)
            elif not ID.match(job):
                raise ValueError("jobs[%r].after: '%s' is no job of these (%s) and no job id (job-..., arr-...)"
                                 % (name, job, ", ".join(jobs)))
    placed, path, result = set(), [], []

    def visit(name):
        if name in placed:
            return
        path.append(name)
        for dep in needs[name]:
            if dep in path:
                cycle = path[path.index(dep):] + [dep]
                raise ValueError("jobs[%r].after: a cycle, %s (each runs after the next); nothing was submitted"
                                 % (name, " -> ".join(cycle)))
            visit(dep)
        path.pop()
        placed.add(name)
        result.append(name)

    for name in jobs:
        visit(name)
    return result, needs


def request_id(base, name, array):
    """``base/name``, or a digest of both where that is longer than a request id may be."""
    rid = "%s/%s" % (base, name)
    if len(rid) <= (ARRAY_REQUEST_ID_MAX if array else REQUEST_ID_MAX):
        return rid
    return "dag-" + hashlib.sha256(("%s\n%s" % (base, name)).encode("utf-8")).hexdigest()[:40]
