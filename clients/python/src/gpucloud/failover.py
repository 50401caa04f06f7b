"""Which scheduler instance a call goes to: the CLI's LeaderFailover (scheduler-client), in Python.

A standby answers writes with UNAVAILABLE and names the leader in the gpucloud-leader trailer; an instance that is
down refuses the connection. Either way the call moves (to the named leader, else the next address) and is tried
again after a back-off, within the client's failover_timeout; no other status is retried.
"""
import time

import grpc

LEADER_TRAILER = "gpucloud-leader"


def parse_addresses(text):
    """'host:port,host:port' as a list, blanks dropped, each once, in order."""
    if not isinstance(text, str):
        raise ValueError("scheduler: 'host:port' or several comma-separated, was %r" % (text,))
    seen = []
    for part in text.split(","):
        part = part.strip()
        if part and part not in seen:
            if ":" not in part or not part.rsplit(":", 1)[1].isdigit():
                raise ValueError("scheduler: '%s' is not host:port (e.g. localhost:8081)" % part)
            seen.append(part)
    if not seen:
        raise ValueError("scheduler: no address in '%s'" % text)
    return seen


def unreachable(details):
    text = (details or "").lower()
    if "connection refused" in text:
        return "connection refused"
    if "dns resolution failed" in text or "name or service not known" in text or "unknown host" in text:
        return "unknown host"
    return None


def first_line(text):
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


class Attempts:
    """The tries of one call, as LeaderFailover's: UNAVAILABLE moves it (to the leader a standby names, else the
    next address) after a back-off of 200 ms doubling to 2 s, within failover_timeout; every address refusing
    the connection in a row ends it at once. Any other status ends it."""

    def __init__(self, client):
        self.client = client
        self.started = time.monotonic()
        self.waited = 0
        self.tried = {client._current}
        self.refused = set()

    def progressed(self):
        self.started = time.monotonic()
        self.waited = 0
        self.refused.clear()

    def failed(self, rpc_error, what):
        client = self.client
        if not hasattr(rpc_error, "code") or rpc_error.code() != grpc.StatusCode.UNAVAILABLE:
            raise client.error(rpc_error, what) from None
        here = client._current
        details = rpc_error.details() if hasattr(rpc_error, "details") else ""
        if unreachable(details):
            self.refused.add(here)
            if self.refused.issuperset(client.addresses):
                raise client.error(rpc_error, what) from None
        else:
            self.refused.clear()
        leader = None
        for key, value in (rpc_error.trailing_metadata() or ()) if hasattr(rpc_error, "trailing_metadata") else ():
            if key == LEADER_TRAILER and value.strip() and value.strip() != here:
                leader = value.strip()
        to = leader or client.addresses[(client.addresses.index(here) + 1) % len(client.addresses)
                                        if here in client.addresses else 0]
        wait = 0.0 if leader and to not in self.tried else min(0.2 * (2 ** min(self.waited, 10)), 2.0)
        if not leader or to in self.tried:
            self.waited += 1
        if time.monotonic() - self.started + wait > client.failover_timeout:
            raise client.error(rpc_error, what) from None
        client.notices("%s: %s; retrying at %s%s" % (here, unreachable(details) or first_line(details) or
                                                     "unavailable", "the leader " if leader else "", to))
        time.sleep(wait)
        client._current = to
        self.tried.add(to)
