#!/usr/bin/env bash
# Job output end to end: from a worker's write to a StreamLogs follower (what `gpucloud logs JOB -f` opens).
#
#   benchmarks/job-logs.sh            100 workers x 10 lines/s (1,000 lines/s) for 60 s, 20 s of warm-up
#
# It brings up a whole stack of its own with ./gpucloud up (own run folder, ports 1838x, home and agent id) whose
# agent runs real processes on its simulated hosts (GPUCLOUD_AGENT_RUNNER_KIND=process), logs in, and runs
# dev.gpucloud.bench.LogLatency: each job is one python3 worker on a tenth of a GPU printing the microsecond of each
# write; one follow per job measures when each line arrives. Then `down`. Same machine, same clock.
#
# Settings (environment): BENCH_WORKERS (100), BENCH_RATE (10 lines/s per worker), BENCH_SECONDS (60),
# BENCH_WARMUP (20), BENCH_FLEET (a100x8:2: 160 tenth-GPU slots).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$ROOT/benchmarks/target/logs-run"
WORKERS="${BENCH_WORKERS:-100}" RATE="${BENCH_RATE:-10}" SECONDS_="${BENCH_SECONDS:-60}" WARMUP="${BENCH_WARMUP:-20}"
export GPUCLOUD_RUN_DIR="$RUN" GPUCLOUD_HOME="$RUN/home"
export GPUCLOUD_SCHEDULER_PORT=18381 GPUCLOUD_BILLING_PORT=18382 GPUCLOUD_METRICS_PORT=18383 GPUCLOUD_AGENT_PORT=18384
export GPUCLOUD_ISSUER_PORT=18386
export GPUCLOUD_AGENT_ID="logbench" GPUCLOUD_AGENT_SIM_NODE_PREFIX="logbench" GPUCLOUD_AGENT_SIM_FLEET="${BENCH_FLEET:-a100x8:2}"
export GPUCLOUD_AGENT_RUNNER_KIND=process GPUCLOUD_SCHEDULER_LOGS_MAX_STREAMS=$((WORKERS + 16))
unset GPUCLOUD_OIDC_URL GPUCLOUD_TOKEN
command -v python3 >/dev/null || { echo "error: the workers are python3 scripts: install python3" >&2; exit 1; }
mkdir -p "$RUN"
[ -f "$ROOT/benchmarks/target/benchmarks.jar" ] || "$ROOT/mvnw" -B -q -o -pl benchmarks -am package -DskipTests
trap 'bash "$ROOT/gpucloud" down >/dev/null 2>&1 || true' EXIT
bash "$ROOT/gpucloud" up --fresh > "$RUN/up.log" 2>&1 || { tail -30 "$RUN/up.log" >&2; exit 1; }
STACK="$(cat "$RUN/active")"  # the run folder up --fresh made (own broker and databases): its CA
bash "$ROOT/gpucloud" --profile bench login --dev --user bench --tenant logbench --role member >/dev/null
GPUCLOUD_TOKEN="$(cat "$RUN/home/profiles/bench.token")" GPUCLOUD_CA_FILE="$STACK/tls/ca.pem" \
  java -cp "$ROOT/benchmarks/target/benchmarks.jar" dev.gpucloud.bench.LogLatency "localhost:$GPUCLOUD_SCHEDULER_PORT" \
  "$WORKERS" "$RATE" "$SECONDS_" "$WARMUP" logbench
