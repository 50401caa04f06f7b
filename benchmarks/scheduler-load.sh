#!/usr/bin/env bash
# End-to-end load on the scheduler-service, black box: SubmitJob over gRPC -> SCHEDULED on job.events.
#
#   benchmarks/scheduler-load.sh                 both phases: as fast as possible, then a fixed rate
#   PHASES=max benchmarks/scheduler-load.sh      only the throughput phase (PHASES=rate: only latency)
#   PHASES="max rate:10 rate" ...                phases in order; rate:N offers N jobs/s
#
# It starts, on private ports and under benchmarks/target/load-run/:
#   - a private Kafka broker (deploy/local/kafka.sh with KAFKA_PORT/KAFKA_CONTROLLER_PORT), so that no
#     other scheduler or agent on the shared broker sees these hosts, jobs and commands
#     (BENCH_KAFKA=shared uses localhost:9092 instead, with private consumer groups);
#   - the scheduler-service jar on BENCH_SCHEDULER_PORT (18181), against the shared PostgreSQL in a
#     schema of its own in gpucloud_scheduler_test (created by Flyway, dropped at the end);
#   - one node agent simulating BENCH_HOSTS (1000) a100x8 hosts;
# then runs dev.gpucloud.bench.SchedulerLoad from benchmarks/target/benchmarks.jar and prints the
# figures. Everything it started is stopped by pid on exit.
#
# Settings (environment): BENCH_SECONDS (60), BENCH_WARMUP (60: on 2 cores the JVMs compile for a minute
# or more, and the window should measure the steady state, not the JIT), BENCH_RATE (1000, the fixed-rate
# phase), BENCH_RATE_SECONDS (30), BENCH_CHANNELS (4), BENCH_INFLIGHT (64), BENCH_RUN_SECONDS (1,
# each job's simulated 'sleep'), BENCH_HOSTS (1000), BENCH_SCHEDULER_PORT (18181),
# BENCH_AGENT_PORT (18184), BENCH_KAFKA_PORT (18192), BENCH_KAFKA_CONTROLLER_PORT (18193),
# BENCH_SCHEDULER_HEAP (1g), BENCH_SCHEDULER_OPTS (more JVM options, e.g. -XX:StartFlightRecording=...),
# BENCH_JVM_OPTS (the scheduler's and the agent's JIT options; default -XX:-UseCodeCacheFlushing, see below),
# BENCH_TLS (on: the scheduler speaks TLS 1.3 only, with a certificate from a CA of the run's own, as
# ./gpucloud up ships it; off: plaintext), BENCH_BUILD (1: build the jars that are missing), BENCH_SCHEDULER_APP (the
# scheduler's quarkus-app folder; default scheduler-service/target/quarkus-app).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$ROOT/benchmarks/target/load-run"
ID="$(printf '%06x' $((RANDOM * 32768 + RANDOM)))"
SCHEMA="bench_$ID"
SCHEDULER_PORT="${BENCH_SCHEDULER_PORT:-18181}"
AGENT_PORT="${BENCH_AGENT_PORT:-18184}"
HOSTS="${BENCH_HOSTS:-1000}"
PHASES="${PHASES:-max rate}"
PGHOST="${PGHOST:-localhost}"
PGPORT="${PGPORT:-5432}"
DB=gpucloud_scheduler_test
PIDS=()

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
port_open() { (exec 3<>"/dev/tcp/localhost/$1") 2>/dev/null; }
BENCH_TLS="${BENCH_TLS:-on}"
case "$BENCH_TLS" in on|off) ;; *) die "BENCH_TLS must be on or off, was '$BENCH_TLS'" ;; esac
# ready PORT [tls]: the service answers its readiness check
ready() {
  if [ "${2:-}" = tls ]; then curl -fsS --cacert "$RUN/tls/ca.pem" "https://localhost:$1/q/health/ready" >/dev/null 2>&1
  else curl -fsS "http://localhost:$1/q/health/ready" >/dev/null 2>&1; fi
}

mkdir -p "$RUN/logs"
if [ "${BENCH_KAFKA:-private}" = shared ]; then
  BOOTSTRAP="${KAFKA_BOOTSTRAP_SERVERS:-localhost:9092}"
else
  export KAFKA_PORT="${BENCH_KAFKA_PORT:-18192}" KAFKA_CONTROLLER_PORT="${BENCH_KAFKA_CONTROLLER_PORT:-18193}"
  BOOTSTRAP="localhost:$KAFKA_PORT"
fi

cleanup() {
  set +e
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    local pid="${PIDS[$i]}"
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
  done
  [ -z "${ISSUER_PID:-}" ] || kill "$ISSUER_PID" 2>/dev/null
  if [ "${BENCH_KAFKA:-private}" != shared ]; then
    GPUCLOUD_RUN_DIR="$RUN" bash "$ROOT/deploy/local/kafka.sh" stop >/dev/null 2>&1
    rm -rf "$RUN/kafka/data"
  fi
  rm -rf "$RUN/scheduler-app" "$RUN/agent-app"
  if command -v psql >/dev/null; then
    PGPASSWORD="${GPUCLOUD_DB_PASSWORD:-gpucloud}" psql -q -h "$PGHOST" -p "$PGPORT" -U "${GPUCLOUD_DB_USER:-gpucloud}" \
      -d "$DB" -c "drop schema if exists $SCHEMA cascade" >/dev/null 2>&1
  fi
  say "stopped what the benchmark started"
}
trap cleanup EXIT

for p in "$SCHEDULER_PORT" "$AGENT_PORT"; do port_open "$p" && die "port $p is taken; set BENCH_SCHEDULER_PORT/BENCH_AGENT_PORT"; done

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
    (cd "$ROOT" && ./mvnw -B -q -o -pl "$(IFS=,; echo "${missing[*]}")" package -DskipTests) || die "build failed"
  fi
fi

# Run copies, so that a rebuild of the services during the run cannot pull the jars from under them.
rm -rf "$RUN/scheduler-app" "$RUN/agent-app"
cp -r "$(dirname "$SCHEDULER_JAR")" "$RUN/scheduler-app"
cp -r "$(dirname "$AGENT_JAR")" "$RUN/agent-app"
say "scheduler jar built $(date -u -r "$SCHEDULER_JAR" '+%Y-%m-%d %H:%M UTC'), agent jar $(date -u -r "$AGENT_JAR" '+%Y-%m-%d %H:%M UTC')"
SCHEDULER_JAR="$RUN/scheduler-app/quarkus-run.jar"
AGENT_JAR="$RUN/agent-app/quarkus-run.jar"

if [ "${BENCH_KAFKA:-private}" != shared ]; then
  port_open "$KAFKA_PORT" && die "port $KAFKA_PORT is taken; set BENCH_KAFKA_PORT"
  GPUCLOUD_RUN_DIR="$RUN" bash "$ROOT/deploy/local/kafka.sh" start
fi

# Java 17's code cache sweeper flushes compiled methods it finds cold, and on 2 shared cores the JIT then
# compiles them again for minutes on end (9,583 methods flushed in a 4-minute run of 2026-12-03): without
# it the steady state is measured, not the recompiling. BENCH_JVM_OPTS='' runs with the JVM's defaults.
JVM_OPTS="${BENCH_JVM_OPTS--XX:-UseCodeCacheFlushing}"

# Authentication is on, as shipped: a development issuer of the benchmark's own (its key in the run folder),
# found by the scheduler through discovery; the driver sends a token that is member of its tenant and operator.
ISSUER_PORT="${BENCH_ISSUER_PORT:-18186}"
port_open "$ISSUER_PORT" && die "port $ISSUER_PORT is taken; set BENCH_ISSUER_PORT"
nohup java -Xmx48m -XX:TieredStopAtLevel=1 -cp "$BENCH_JAR" dev.gpucloud.identity.DevIssuer serve "$ISSUER_PORT" \
  "$RUN/issuer.jwk" >"$RUN/logs/issuer.log" 2>&1 &
ISSUER_PID=$!
until curl -fsS "http://localhost:$ISSUER_PORT/.well-known/openid-configuration" >/dev/null 2>&1; do sleep 0.5; done
# token_for TENANT: a token for the driver of a phase (each phase submits as a tenant of its own)
token_for() {
  java -cp "$BENCH_JAR" dev.gpucloud.identity.DevIssuer mint "$RUN/issuer.jwk" "http://localhost:$ISSUER_PORT" \
    bench "$1" member,operator 24
}

# TLS as shipped: a CA of the run's own (deploy/local/tls.sh) and a certificate for the scheduler; the driver
# trusts that CA (GPUCLOUD_CA_FILE)
TLS_ENV=() TLS_OPTS=()
if [ "$BENCH_TLS" = on ]; then
  GPUCLOUD_RUN_DIR="$RUN" bash "$ROOT/deploy/local/tls.sh" server scheduler
  TLS_ENV=(GPUCLOUD_TLS_KEYSTORE="$RUN/tls/scheduler.p12" GPUCLOUD_TLS_KEYSTORE_PASSWORD="$(cat "$RUN/tls/scheduler.pass")"
    GPUCLOUD_TLS_CA="$RUN/tls/ca.pem")
  TLS_OPTS=(-Dquarkus.profile=prod,tls -Dquarkus.http.ssl-port="$SCHEDULER_PORT")
  export GPUCLOUD_CA_FILE="$RUN/tls/ca.pem"
fi

say "starting the scheduler on :$SCHEDULER_PORT (schema $DB.$SCHEMA, broker $BOOTSTRAP, TLS $BENCH_TLS)"
[ "${#TLS_ENV[@]}" -eq 0 ] || export "${TLS_ENV[@]}"
QUARKUS_HTTP_PORT="$SCHEDULER_PORT" KAFKA_BOOTSTRAP_SERVERS="$BOOTSTRAP" GPUCLOUD_OIDC_URL="http://localhost:$ISSUER_PORT" \
QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$PGHOST:$PGPORT/$DB?search_path=$SCHEMA" \
QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://$PGHOST:$PGPORT/$DB?currentSchema=$SCHEMA" \
QUARKUS_FLYWAY_SCHEMAS="$SCHEMA" QUARKUS_FLYWAY_DEFAULT_SCHEMA="$SCHEMA" \
  nohup java -Xmx"${BENCH_SCHEDULER_HEAP:-1g}" $JVM_OPTS ${BENCH_SCHEDULER_OPTS:-} \
  -Dgpucloud.scheduler.inputs-group="bench-$ID" -Dgpucloud.scheduler.inputs-member="bench-$ID-leader" \
  "${TLS_OPTS[@]}" -jar "$SCHEDULER_JAR" >"$RUN/logs/scheduler.log" 2>&1 &
PIDS+=($!)
unset GPUCLOUD_TLS_KEYSTORE GPUCLOUD_TLS_KEYSTORE_PASSWORD GPUCLOUD_TLS_CA

say "starting a simulated fleet of $HOSTS a100x8 hosts on :$AGENT_PORT (node prefix b$ID)"
nohup java -Xmx768m $JVM_OPTS -Dquarkus.http.port="$AGENT_PORT" -Dkafka.bootstrap.servers="$BOOTSTRAP" \
  -Dgpucloud.agent.id="bench-$ID" -Dgpucloud.agent.sim.node-prefix="b$ID" \
  -Dgpucloud.agent.sim.fleet="a100x8:$HOSTS" -Dgpucloud.agent.telemetry-interval=15s \
  -Dgpucloud.agent.logs.simulated=false \
  -jar "$AGENT_JAR" >"$RUN/logs/agent.log" 2>&1 &
PIDS+=($!)

for svc in "scheduler $SCHEDULER_PORT $([ "$BENCH_TLS" = on ] && echo tls)" "agent $AGENT_PORT"; do
  set -- $svc
  i=0
  until ready "$2" "${3:-}"; do
    i=$((i + 1))
    if [ "$i" -gt 180 ]; then tail -30 "$RUN/logs/$1.log" >&2; die "$1 did not become ready in 180 s"; fi
    sleep 1
  done
  say "  $1 ready (${i} s)"
done

# CPU per job, from /proc: the scheduler, the agent, the broker (when the benchmark runs its own) and
# every postgres process (the database may serve others too: a busy machine shows there first)
CPU="scheduler=${PIDS[0]},agent=${PIDS[1]},postgres=@postgres"
if [ "${BENCH_KAFKA:-private}" != shared ] && [ -f "$RUN/kafka/kafka.pid" ]; then
  CPU="$CPU,broker=$(cat "$RUN/kafka/kafka.pid")"
fi

drive() {
  java -Xmx1g -cp "$BENCH_JAR" dev.gpucloud.bench.SchedulerLoad --target "localhost:$SCHEDULER_PORT" --cpu "$CPU" \
    --bootstrap "$BOOTSTRAP" --node-prefix "b$ID-" --channels "${BENCH_CHANNELS:-4}" \
    --inflight "${BENCH_INFLIGHT:-64}" --run-seconds "${BENCH_RUN_SECONDS:-1}" --drain "${BENCH_DRAIN:-30}" "$@"
}

say ""
say "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
first=1
for phase in $PHASES; do
  wait_hosts=()
  [ "$first" = 1 ] && wait_hosts=(--wait-hosts "$HOSTS")
  first=0
  case "$phase" in
    max) GPUCLOUD_TOKEN="$(token_for "bench-max-$ID")" drive "${wait_hosts[@]}" --label max --tenant "bench-max-$ID" --rate 0 \
           --seconds "${BENCH_SECONDS:-60}" --warmup "${BENCH_WARMUP:-60}" ;;
    rate|rate:*)
      rate="${BENCH_RATE:-1000}"; [ "$phase" = rate ] || rate="${phase#rate:}"
      GPUCLOUD_TOKEN="$(token_for "bench-rate$rate-$ID")" drive "${wait_hosts[@]}" --label "rate-$rate" --tenant "bench-rate$rate-$ID" \
           --rate "$rate" --seconds "${BENCH_RATE_SECONDS:-30}" --warmup "${BENCH_WARMUP:-60}" ;;
    *) die "unknown phase '$phase' (max, rate, rate:N)" ;;
  esac
  say "load average after $phase: $(cut -d' ' -f1-3 /proc/loadavg)"
done
