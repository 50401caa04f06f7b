#!/usr/bin/env bash
# Restart of a single scheduler that holds many running allocations: how long until it places again,
# and how many of the running jobs the restart disturbed (the goal is none).
#
#   benchmarks/scheduler-restart.sh                          10,000 running jobs; kill -9, then SIGTERM
#   BENCH_ALLOCATIONS=2000 benchmarks/scheduler-restart.sh   a smaller fleet
#   ROUNDS=KILL benchmarks/scheduler-restart.sh              only the kill -9 round
#   BENCH_QUEUED=10000 benchmarks/scheduler-restart.sh       and 10,000 jobs queued behind them (no host has
#                                                            their GPU model), which every pass goes over
#
# It starts, on private ports and under benchmarks/target/restart-run/:
#   - a private Kafka broker (deploy/local/kafka.sh with KAFKA_PORT/KAFKA_CONTROLLER_PORT);
#   - the scheduler-service jar on BENCH_SCHEDULER_PORT (18381), against the shared PostgreSQL in a
#     schema of its own in gpucloud_scheduler_test (created by Flyway, dropped at the end), as the one
#     instance of leader election (it takes the lease at start, and takes its own lease back at once
#     after a restart);
#   - node agents simulating BENCH_HOSTS a100x8 hosts (enough for BENCH_ALLOCATIONS 1-GPU jobs plus
#     BENCH_FREE_HOSTS empty ones for the probe), at most BENCH_HOSTS_PER_AGENT each (split evenly), each with its own
#     gpucloud.agent.id and node prefix; telemetry every 15 s, inventory every hour.
# Then dev.gpucloud.bench.SchedulerRestart fills the fleet with BENCH_ALLOCATIONS 1-GPU jobs of
# 'sleep BENCH_RUN_SECONDS' and waits until they all RUN; for each round in ROUNDS it stops the
# scheduler (KILL: kill -9; TERM: SIGTERM, a graceful shutdown), starts it again at once, and the
# driver measures start -> ready, the takeover, stop -> the first placement of a probe job submitted
# right after, and, BENCH_SETTLE seconds later, the running jobs the restart disturbed. Everything it
# started is stopped by pid on exit.
#
# Settings (environment): BENCH_ALLOCATIONS (10000), BENCH_FREE_HOSTS (2), BENCH_HOSTS (enough for
# both), BENCH_HOSTS_PER_AGENT (1000), BENCH_RUN_SECONDS (3600, longer than the whole run),
# BENCH_SETTLE (90), BENCH_QUEUED (0), ROUNDS ("KILL TERM"), BENCH_CHANNELS (4), BENCH_INFLIGHT (64),
# BENCH_SCHEDULER_PORT (18381), BENCH_ISSUER_PORT (18187), BENCH_AGENT_PORT (18384, the next agents on the following ports),
# BENCH_KAFKA_PORT (18392), BENCH_KAFKA_CONTROLLER_PORT (18393), BENCH_SCHEDULER_HEAP (1g),
# BENCH_SCHEDULER_OPTS (more JVM options), BENCH_BUILD (1: build the jars that are missing),
# BENCH_SCHEDULER_APP (the scheduler's quarkus-app folder; default scheduler-service/target/quarkus-app).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$ROOT/benchmarks/target/restart-run"
ID="$(printf '%06x' $((RANDOM * 32768 + RANDOM)))"
SCHEMA="bench_$ID"
TENANT="bench-$ID"
SCHEDULER_PORT="${BENCH_SCHEDULER_PORT:-18381}"
AGENT_PORT="${BENCH_AGENT_PORT:-18384}"
ALLOCATIONS="${BENCH_ALLOCATIONS:-10000}"
HOSTS="${BENCH_HOSTS:-$(( (ALLOCATIONS + 7) / 8 + ${BENCH_FREE_HOSTS:-2} ))}"
PER_AGENT="${BENCH_HOSTS_PER_AGENT:-1000}"
AGENTS=$(( (HOSTS + PER_AGENT - 1) / PER_AGENT ))
ROUNDS="${ROUNDS:-KILL TERM}"
PGHOST="${PGHOST:-localhost}"
PGPORT="${PGPORT:-5432}"
DB=gpucloud_scheduler_test
JDBC="jdbc:postgresql://$PGHOST:$PGPORT/$DB?currentSchema=$SCHEMA"
PIDS=()
SCHEDULER_PID=

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
port_open() { (exec 3<>"/dev/tcp/localhost/$1") 2>/dev/null; }
ready() { curl -fsS "http://localhost:$1/q/health/ready" >/dev/null 2>&1; }
now_ms() { date +%s%3N; }
# Alive and not a zombie (a killed child stays one until this shell reaps it).
alive() { local s; s="$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" || return 1; [ -n "$s" ] && [ "$s" != Z ]; }
sql() {
  PGPASSWORD="${GPUCLOUD_DB_PASSWORD:-gpucloud}" psql -qtA -h "$PGHOST" -p "$PGPORT" -U "${GPUCLOUD_DB_USER:-gpucloud}" \
    -d "$DB" -c "$1"
}

mkdir -p "$RUN/logs"
rm -f "$RUN"/logs/* "$RUN"/round-*.tsv
export KAFKA_PORT="${BENCH_KAFKA_PORT:-18392}" KAFKA_CONTROLLER_PORT="${BENCH_KAFKA_CONTROLLER_PORT:-18393}"
BOOTSTRAP="localhost:$KAFKA_PORT"

stop_pid() {
  local pid="$1"
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 40); do alive "$pid" || return 0; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null
}

cleanup() {
  set +e
  [ -n "$SCHEDULER_PID" ] && stop_pid "$SCHEDULER_PID"
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
  GPUCLOUD_RUN_DIR="$RUN" bash "$ROOT/deploy/local/kafka.sh" stop >/dev/null 2>&1
  rm -rf "$RUN/kafka/data" "$RUN/scheduler-app" "$RUN/agent-app" "$RUN/agent-state"
  sql "drop schema if exists $SCHEMA cascade" >/dev/null 2>&1
  say "stopped what the benchmark started"
}
trap cleanup EXIT

command -v psql >/dev/null || die "psql is needed (to drop the benchmark's schema)"
for ((a = 0; a < AGENTS; a++)); do
  port_open $((AGENT_PORT + a)) && die "port $((AGENT_PORT + a)) is taken; set BENCH_AGENT_PORT"
done
port_open "$SCHEDULER_PORT" && die "port $SCHEDULER_PORT is taken; set BENCH_SCHEDULER_PORT"
port_open "$KAFKA_PORT" && die "port $KAFKA_PORT is taken; set BENCH_KAFKA_PORT"

SCHEDULER_JAR="${BENCH_SCHEDULER_APP:-$ROOT/scheduler-service/target/quarkus-app}/quarkus-run.jar"
AGENT_JAR="$ROOT/node-agent/target/quarkus-app/quarkus-run.jar"
BENCH_JAR="$ROOT/benchmarks/target/benchmarks.jar"
if [ "${BENCH_BUILD:-1}" = 1 ]; then
  missing=()
  [ -f "$SCHEDULER_JAR" ] || missing+=(scheduler-service)
  [ -f "$AGENT_JAR" ] || missing+=(node-agent)
  [ -f "$BENCH_JAR" ] || missing+=(benchmarks)
  if [ "${#missing[@]}" -gt 0 ]; then
    say "building ${missing[*]}"
    (cd "$ROOT" && ./mvnw -B -q -o -pl "$(IFS=,; echo "${missing[*]}")" -am package -DskipTests) || die "build failed"
  fi
fi

# Run copies, so that a rebuild of the services during the run cannot pull the jars from under them.
rm -rf "$RUN/scheduler-app" "$RUN/agent-app"
cp -r "$(dirname "$SCHEDULER_JAR")" "$RUN/scheduler-app"
cp -r "$(dirname "$AGENT_JAR")" "$RUN/agent-app"
say "scheduler jar built $(date -u -r "$SCHEDULER_JAR" '+%Y-%m-%d %H:%M UTC'), agent jar $(date -u -r "$AGENT_JAR" '+%Y-%m-%d %H:%M UTC')"
SCHEDULER_JAR="$RUN/scheduler-app/quarkus-run.jar"
AGENT_JAR="$RUN/agent-app/quarkus-run.jar"

GPUCLOUD_RUN_DIR="$RUN" bash "$ROOT/deploy/local/kafka.sh" start

# Authentication is on, as shipped: a development issuer of the benchmark's own (its key in the run folder),
# found by the scheduler through discovery; the driver sends one token for the benchmark's tenants.
ISSUER_PORT="${BENCH_ISSUER_PORT:-18187}"
port_open "$ISSUER_PORT" && die "port $ISSUER_PORT is taken; set BENCH_ISSUER_PORT"
nohup java -Xmx48m -XX:TieredStopAtLevel=1 -cp "$BENCH_JAR" dev.gpucloud.identity.DevIssuer serve "$ISSUER_PORT" \
  "$RUN/issuer.jwk" >"$RUN/logs/issuer.log" 2>&1 &
PIDS+=($!)
until curl -fsS "http://localhost:$ISSUER_PORT/.well-known/openid-configuration" >/dev/null 2>&1; do sleep 0.5; done
GPUCLOUD_TOKEN="$(java -cp "$BENCH_JAR" dev.gpucloud.identity.DevIssuer mint "$RUN/issuer.jwk" \
  "http://localhost:$ISSUER_PORT" bench "$TENANT,$TENANT-queue,probe-$ID" member,operator 24)"
export GPUCLOUD_TOKEN

STARTS=0
START_MS=
start_scheduler() {
  STARTS=$((STARTS + 1))
  SCHEDULER_LOG="$RUN/logs/scheduler-$STARTS.log"
  START_MS="$(now_ms)"
  QUARKUS_HTTP_PORT="$SCHEDULER_PORT" KAFKA_BOOTSTRAP_SERVERS="$BOOTSTRAP" GPUCLOUD_OIDC_URL="http://localhost:$ISSUER_PORT" \
  QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$PGHOST:$PGPORT/$DB?search_path=$SCHEMA" \
  QUARKUS_DATASOURCE_JDBC_URL="$JDBC" \
  QUARKUS_FLYWAY_SCHEMAS="$SCHEMA" QUARKUS_FLYWAY_DEFAULT_SCHEMA="$SCHEMA" \
    nohup java -Xmx"${BENCH_SCHEDULER_HEAP:-1g}" ${BENCH_SCHEDULER_OPTS:-} \
    -Dgpucloud.scheduler.inputs-group="bench-$ID" -Dgpucloud.scheduler.inputs-member="bench-$ID-leader" \
    -jar "$SCHEDULER_JAR" >"$SCHEDULER_LOG" 2>&1 &
  SCHEDULER_PID=$!
  disown "$SCHEDULER_PID" # no "Killed" notice from the shell: the kill is the point
}

say "starting the scheduler on :$SCHEDULER_PORT (schema $DB.$SCHEMA, broker $BOOTSTRAP)"
start_scheduler

say "starting $AGENTS agent(s) for $HOSTS a100x8 hosts ($ALLOCATIONS running jobs + the rest free), node prefix b$ID-"
left="$HOSTS"
for ((a = 0; a < AGENTS; a++)); do
  n=$(( (left + AGENTS - a - 1) / (AGENTS - a) )); left=$((left - n))   # as even as it divides
  mkdir -p "$RUN/agent-state/$a"
  nohup java -Xmx768m -Dquarkus.http.port=$((AGENT_PORT + a)) -Dkafka.bootstrap.servers="$BOOTSTRAP" \
    -Dgpucloud.agent.id="bench-$ID-$a" -Dgpucloud.agent.sim.node-prefix="b$ID-$a" \
    -Dgpucloud.agent.sim.fleet="a100x8:$n" -Dgpucloud.agent.telemetry-interval=15s \
    -Dgpucloud.agent.inventory-interval=1h \
    -Dgpucloud.agent.logs.simulated=false \
    -Dgpucloud.agent.spool.dir="$RUN/agent-state/$a/spool" -Dgpucloud.agent.runner.dir="$RUN/agent-state/$a/runs" \
    -jar "$AGENT_JAR" >"$RUN/logs/agent-$a.log" 2>&1 &
  PIDS+=($!)
  say "  agent $a: $n hosts on :$((AGENT_PORT + a))"
done

AGENT_METRICS=
for ((a = 0; a < AGENTS; a++)); do
  AGENT_METRICS="$AGENT_METRICS${AGENT_METRICS:+,}http://localhost:$((AGENT_PORT + a))/q/metrics"
done

wait_ready() { # name port log
  local i=0
  until ready "$2"; do
    i=$((i + 1))
    if [ "$i" -gt 180 ]; then tail -30 "$3" >&2; die "$1 did not become ready in 180 s"; fi
    sleep 1
  done
  say "  $1 ready (${i} s)"
}
wait_ready scheduler "$SCHEDULER_PORT" "$SCHEDULER_LOG"
for ((a = 0; a < AGENTS; a++)); do wait_ready "agent $a" $((AGENT_PORT + a)) "$RUN/logs/agent-$a.log"; done

drive() { java -Xmx1g -cp "$BENCH_JAR" dev.gpucloud.bench.SchedulerRestart "$@" --target "localhost:$SCHEDULER_PORT" \
  --jdbc "$JDBC" --db-user "${GPUCLOUD_DB_USER:-gpucloud}" --db-password "${GPUCLOUD_DB_PASSWORD:-gpucloud}"; }
running() { sql "select count(*) from $SCHEMA.allocations a join $SCHEMA.jobs j on j.id = a.job_id
  where j.tenant = '$TENANT' and a.state = 'RUNNING'"; }

say ""
say "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the fill"
drive fill --tenant "$TENANT" --count "$ALLOCATIONS" --run-seconds "${BENCH_RUN_SECONDS:-3600}" \
  --channels "${BENCH_CHANNELS:-4}" --inflight "${BENCH_INFLIGHT:-64}" --node-prefix "b$ID-" --wait-hosts "$HOSTS" \
  --queued "${BENCH_QUEUED:-0}"
say "load average after the fill: $(cut -d' ' -f1-3 /proc/loadavg)"

labels=()
for round in $ROUNDS; do
  case "$round" in KILL|TERM) ;; *) die "unknown round '$round' (KILL, TERM)" ;; esac
  sleep 5
  before="$(running)"
  say ""
  say "round $round: $before allocations RUNNING; load average $(cut -d' ' -f1-3 /proc/loadavg); stopping pid $SCHEDULER_PID"
  kill_ms="$(now_ms)"
  kill -"$round" "$SCHEDULER_PID"
  for _ in $(seq 1 1200); do alive "$SCHEDULER_PID" || break; sleep 0.05; done
  alive "$SCHEDULER_PID" && { say "  still running after 60 s: kill -9"; kill -9 "$SCHEDULER_PID"; sleep 0.5; }
  exited_ms="$(now_ms)"
  start_scheduler
  label="$(echo "$round" | tr 'A-Z' 'a-z')-$STARTS"
  labels+=("$label")
  drive probe --bootstrap "$BOOTSTRAP" --tenant "$TENANT" --probe-tenant "probe-$ID" --label "$label" \
    --signal "$round" --running-before "$before" --kill-ms "$kill_ms" --exited-ms "$exited_ms" --start-ms "$START_MS" \
    --ready-url "http://localhost:$SCHEDULER_PORT/q/health/ready" --log "$SCHEDULER_LOG" \
    --settle "${BENCH_SETTLE:-90}" --out "$RUN/round-$label.tsv" --agent-metrics "$AGENT_METRICS"
  say "load average after round $round: $(cut -d' ' -f1-3 /proc/loadavg)"
done

# One table, a column per round.
say ""
echo "restart of one scheduler with $ALLOCATIONS running allocations on $HOSTS hosts ($AGENTS agent(s)), $(nproc) cores:"
files=()
header="| figure |"; rule="|---|"
for l in "${labels[@]}"; do files+=("$RUN/round-$l.tsv"); header="$header $l |"; rule="$rule---|"; done
echo "$header"; echo "$rule"
if [ "${#files[@]}" -gt 0 ]; then
  paste "${files[@]}" | awk -F'\t' '{ line = "| " $1 " |"; for (i = 2; i <= NF; i += 2) line = line " " $i " |"; print line }'
fi
say "logs: $RUN/logs (kept; the next run overwrites them)"
