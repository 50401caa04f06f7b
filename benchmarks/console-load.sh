#!/usr/bin/env bash
# The web console's page loads with 10,000 jobs in one tenant (issue 17: p95 <= 300 ms).
#
#   benchmarks/console-load.sh        10,000 jobs, 200 loads of each page
#
# It brings up a whole stack of its own with ./gpucloud up --fresh (own run folder, broker and databases, so its
# 10,000 jobs never stay in a shared database for the next stack to restore; ports 1848x, home and agent id; TLS as
# shipped), logs in as the tenant's member, and runs dev.gpucloud.bench.ConsoleLoad: submits the jobs over gRPC
# (8 run on the one simulated host, the rest wait), then loads /console/jobs (first page, the 21st page through the
# next links, a state filter) and one job's page, one request after another with the session cookie, and prints
# p50/p95/p99 of each. Then `down`. Settings (environment): BENCH_JOBS (10000), BENCH_LOADS (200).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$ROOT/benchmarks/target/console-run"
JOBS="${BENCH_JOBS:-10000}" LOADS="${BENCH_LOADS:-200}"
export GPUCLOUD_RUN_DIR="$RUN" GPUCLOUD_HOME="$RUN/home"
export GPUCLOUD_SCHEDULER_PORT=18481 GPUCLOUD_BILLING_PORT=18482 GPUCLOUD_METRICS_PORT=18483 GPUCLOUD_AGENT_PORT=18484
export GPUCLOUD_ISSUER_PORT=18486
export GPUCLOUD_AGENT_ID="consolebench" GPUCLOUD_AGENT_SIM_NODE_PREFIX="consolebench" GPUCLOUD_AGENT_SIM_FLEET="a100x8:1"
unset GPUCLOUD_OIDC_URL GPUCLOUD_TOKEN
mkdir -p "$RUN"
[ -f "$ROOT/benchmarks/target/benchmarks.jar" ] || "$ROOT/mvnw" -B -q -o -pl benchmarks -am package -DskipTests
trap 'bash "$ROOT/gpucloud" down >/dev/null 2>&1 || true' EXIT
bash "$ROOT/gpucloud" up --fresh > "$RUN/up.log" 2>&1 || { tail -30 "$RUN/up.log" >&2; exit 1; }
STACK="$(cat "$RUN/active")"  # the run folder up --fresh made: its CA
bash "$ROOT/gpucloud" --profile bench login --dev --user bench --tenant consolebench --role member >/dev/null
GPUCLOUD_TOKEN="$(cat "$RUN/home/profiles/bench.token")" GPUCLOUD_CA_FILE="$STACK/tls/ca.pem" \
  java -cp "$ROOT/benchmarks/target/benchmarks.jar" dev.gpucloud.bench.ConsoleLoad "localhost:$GPUCLOUD_SCHEDULER_PORT" \
  "$JOBS" "$LOADS" consolebench
