#!/usr/bin/env python3
"""Runs every panel query of deploy/grafana/dashboards/*.json through a Prometheus HTTP API and
fails, naming the dashboard and panel, when a query returns no data or an error.

    python3 deploy/grafana/check_panels.py http://127.0.0.1:9090

Grafana's interval variables are replaced first: $__rate_interval by 1m, $__interval by 15s, and
$__range by 1h (a short-lived test fleet has only minutes of samples; any range that covers them works).
"""
import glob
import json
import os
import sys
import urllib.parse
import urllib.request

SUBSTITUTIONS = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h"}


def query(base, expr):
    url = base.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    if body.get("status") != "success":
        raise RuntimeError(body.get("error", "unknown error"))
    return body["data"]["result"]


def panels_of(path):
    with open(path) as f:
        board = json.load(f)
    for p in board.get("panels", []):
        yield board["title"], p


def main(base, directory, quiet=False):
    failures = []
    checked = 0
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        for title, p in panels_of(path):
            for target in p.get("targets", []):
                expr = target["expr"]
                for var, value in SUBSTITUTIONS.items():
                    expr = expr.replace(var, value)
                checked += 1
                try:
                    result = query(base, expr)
                except Exception as e:  # an invalid query, or Prometheus down
                    failures.append(f"{title} / {p['title']} [{target['refId']}]: error: {e} (query: {expr})")
                    continue
                if not result:
                    failures.append(f"{title} / {p['title']} [{target['refId']}]: no data (query: {expr})")
                elif not quiet:
                    print(f"  ok  {title} / {p['title']} [{target['refId']}]: {len(result)} series")
    for failure in failures:
        print("  FAIL " + failure)
    print(f"{checked - len(failures)} of {checked} panel queries returned data")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    here = os.path.dirname(os.path.abspath(__file__))
    quiet = "--quiet" in sys.argv
    sys.exit(main(sys.argv[1], os.path.join(here, "dashboards"), quiet))
