#!/usr/bin/env bash
# Runs every Grafana panel's query against a real Prometheus fed by a real fleet, and fails naming
# each panel whose query returns no data.
#
# What runs, all on private ports and ids, against the shared broker (localhost:$KAFKA_PORT):
#   - metrics-service (its built jar), with fast refresh and lag intervals and consumer groups of its own;
#     METRICS_SHARDS=N runs N shards of it instead (docs/metrics.md, "Sharding"), all of them scraped, so the
#     panels are checked against a fleet split between instances;
#   - node-agent (its built jar) with the simulated backend: two hosts (A100 x8 on demand, V100 spot);
#   - Debian's Prometheus, scraping metrics-service every second, storage in a temp dir;
#   - a scenario on job.events, allocation.events, node.events and usage.events (Kafka's console
#     producer, CloudEvents headers as docs/events.md describes): placed, running, interrupted and
#     waiting jobs, a checkpoint, a spot notice, an XID fault, usage, one bad record (a dead letter).
# Then deploy/grafana/check_panels.py queries Prometheus for every panel.
#
# Needs: java 17, python3, prometheus (apt-get install prometheus), the broker running, and the jars
# (built here, tests skipped, when missing). Everything it starts is stopped by pid on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
KAFKA_PORT="${KAFKA_PORT:-9092}"
BOOTSTRAP="localhost:$KAFKA_PORT"
RUN_ID="chk$(date +%s | tail -c 6)$$"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/gpucloud-panels.XXXXXX")"
PIDS=()

say() { printf 'check-panels: %s\n' "$*" >&2; }
cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  # Quarkus leaves its consumer groups politely, which can take seconds; 10 s, then SIGKILL.
  for _ in $(seq 1 20); do
    local alive=0
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.5
  done
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    for log in "$TMP"/*.log; do [ -f "$log" ] && { say "last lines of $log:"; tail -15 "$log" >&2; }; done
  fi
  rm -rf "$TMP"
  exit "$status"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() { # URL SECONDS PID
  local i=0
  until curl -fsS "$1" >/dev/null 2>&1; do
    i=$((i + 1)); [ "$i" -ge "$2" ] && { say "gave up waiting for $1 after $2 s"; return 1; }
    kill -0 "$3" 2>/dev/null || { say "the process behind $1 exited"; return 1; }
    sleep 1
  done
}

command -v prometheus >/dev/null || { say "prometheus is not installed (apt-get install -y prometheus)"; exit 1; }
METRICS_JAR=metrics-service/target/quarkus-app/quarkus-run.jar
AGENT_JAR=node-agent/target/quarkus-app/quarkus-run.jar
if [ ! -f "$METRICS_JAR" ] || [ ! -f "$AGENT_JAR" ]; then
  say "building metrics-service and node-agent (-DskipTests)"
  ./mvnw -B -q -Dmaven.test.skip=true -pl metrics-service,node-agent -am package
fi
# gpucloud's topics, as contracts declares them, before any consumer asks for one: on a fresh broker a consumer's
# request would auto-create it with the broker's defaults (3 partitions, no compaction), which the tests that run
# after this check would then meet
bash deploy/local/kafka.sh topics

SHARDS="${METRICS_SHARDS:-1}"
[[ "$SHARDS" =~ ^[1-6]$ ]] || { say "METRICS_SHARDS must be 1 to 6, was '$SHARDS'"; exit 1; }
METRICS_PORTS=(); METRICS_PIDS=()
for ((i = 0; i < SHARDS; i++)); do METRICS_PORTS+=("$(free_port)"); done
AGENT_PORT="$(free_port)"; PROM_PORT="$(free_port)"
JAVA_OPTS=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dkafka.bootstrap.servers="$BOOTSTRAP")

say "metrics-service on $(printf ":%s " "${METRICS_PORTS[@]}")($SHARDS shard(s)), node-agent on :$AGENT_PORT, prometheus on :$PROM_PORT (run $RUN_ID)"
for ((i = 0; i < SHARDS; i++)); do
  java "${JAVA_OPTS[@]}" -Dquarkus.http.port="${METRICS_PORTS[$i]}" \
    -Dgpucloud.metrics.shard="$i" -Dgpucloud.metrics.shards="$SHARDS" \
    -Dmp.messaging.incoming.telemetry-in.group.id="metrics-$RUN_ID" \
    -Dmp.messaging.incoming.node-events-in.group.id="metrics-$RUN_ID" \
    -Dmp.messaging.incoming.usage-events-in.group.id="metrics-$RUN_ID" \
    -Dgpucloud.metrics.platform-refresh=1s -Dgpucloud.metrics.lag-interval=2s -Dgpucloud.metrics.idle-window=5s \
    -jar "$METRICS_JAR" >"$TMP/metrics-service-$i.log" 2>&1 &
  METRICS_PIDS+=($!); PIDS+=($!)
done
java "${JAVA_OPTS[@]}" -Dquarkus.http.port="$AGENT_PORT" \
  -Dgpucloud.agent.id="agent-$RUN_ID" -Dgpucloud.agent.sim.node-prefix="$RUN_ID" \
  -Dgpucloud.agent.sim.fleet=a100x8:1,v100-spot:1 -Dgpucloud.agent.telemetry-interval=1s \
  -jar "$AGENT_JAR" >"$TMP/node-agent.log" 2>&1 &
AGENT_PID=$!; PIDS+=("$AGENT_PID")

mkdir -p "$TMP/prom"
cat >"$TMP/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: metrics-service
    metrics_path: /q/metrics
    static_configs:
      - targets: [$(printf '"127.0.0.1:%s",' "${METRICS_PORTS[@]}" | sed 's/,$//')]
YAML
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PROM_PID=$!; PIDS+=("$PROM_PID")

for ((i = 0; i < SHARDS; i++)); do
  wait_http "http://127.0.0.1:${METRICS_PORTS[$i]}/q/health/ready" 90 "${METRICS_PIDS[$i]}"
done
wait_http "http://127.0.0.1:$AGENT_PORT/q/health/ready" 90 "$AGENT_PID"
wait_http "http://127.0.0.1:$PROM_PORT/-/ready" 30 "$PROM_PID"

# The simulated hosts' ids, from their series (the agent names them <prefix>-<stem>-<n>).
HOSTS=""
for _ in $(seq 1 60); do
  # the hosts, from whichever shard exports each
  HOSTS="$(for port in "${METRICS_PORTS[@]}"; do curl -fsS -H 'Accept: text/plain' "http://127.0.0.1:$port/q/metrics"; done \
    | grep -o "Hostname=\"$RUN_ID[^\"]*\"" | sort -u | sed 's/Hostname="\(.*\)"/\1/' || true)"
  [ "$(printf '%s\n' "$HOSTS" | grep -c .)" -ge 2 ] && break
  sleep 1
done
ON_DEMAND="$(printf '%s\n' "$HOSTS" | grep -v spot | head -1)"
SPOT="$(printf '%s\n' "$HOSTS" | grep spot | head -1)"
[ -n "$ON_DEMAND" ] && [ -n "$SPOT" ] || { say "the simulated hosts did not report (got: $HOSTS)"; exit 1; }
say "simulated hosts: $ON_DEMAND, $SPOT"

# The scenario, as console-producer lines: headers<TAB>key<TAB>value (scenario.py ROUND writes them).
cat >"$TMP/scenario.py" <<'PY'
import json, sys, uuid, datetime
run, od, spot, tmp, rnd = sys.argv[1:6]
run = run + ('' if rnd == '1' else '-r' + rnd)
now = datetime.datetime.now(datetime.timezone.utc)
def t(seconds): return (now + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
def line(ce_type, key, payload):
    headers = ",".join([f"ce_specversion:1.0", f"ce_id:{uuid.uuid4()}", f"ce_type:{ce_type}",
                        f"ce_source:/check-panels/{run}", f"ce_time:{t(0)}", "content-type:application/json"])
    return f"{headers}\t{key}\t{json.dumps(payload)}\n"
def job(job_id, tenant, state, at, reason, placement=()):
    return line("dev.gpucloud.job.event.v1", job_id, {"jobId": job_id, "tenant": tenant, "state": state,
        "reason": reason, "occurredAt": t(at), "placement": list(placement), "resumeFrom": None})
def worker(node, alloc, gpus): return {"rank": 0, "nodeId": node, "gpuIndices": gpus, "allocationId": alloc}
a = worker(od, f"{run}-alloc-a", [0, 1]); b = worker(spot, f"{run}-alloc-b", [0])
with open(f"{tmp}/job.events", "w") as f:
    f.write(job(f"{run}-job-a", "acme", "PENDING", 0, "waiting for a placement"))
    f.write(job(f"{run}-job-a", "acme", "SCHEDULED", 2, "placed", [a]))
    f.write(job(f"{run}-job-a", "acme", "RUNNING", 3, "all workers running", [a]))
    f.write(job(f"{run}-job-b", "globex", "PENDING", 0, "waiting for a placement"))
    f.write(job(f"{run}-job-b", "globex", "SCHEDULED", 1, "placed", [b]))
    f.write(job(f"{run}-job-b", "globex", "RUNNING", 2, "all workers running", [b]))
    f.write(job(f"{run}-job-b", "globex", "PENDING", 4, "requeued: spot interruption on " + spot))
    f.write(job(f"{run}-job-b", "globex", "SCHEDULED", 5, "placed", [b]))
    f.write(job(f"{run}-job-b", "globex", "RUNNING", 6, "all workers running", [b]))
    f.write(job(f"{run}-job-c", "initech", "PENDING", 0, "waiting for a placement"))
    # A record whose key is not its jobId: dead-lettered to job.events.dlq.
    f.write(line("dev.gpucloud.job.event.v1", f"{run}-bad", {"jobId": f"{run}-other", "tenant": "acme",
        "state": "PENDING", "occurredAt": t(0), "placement": []}))
with open(f"{tmp}/allocation.events", "w") as f:
    f.write(line("dev.gpucloud.allocation.event.v1", f"{run}-job-a", {"allocationId": a["allocationId"],
        "jobId": f"{run}-job-a", "nodeId": od, "type": "CHECKPOINT_SAVED", "occurredAt": t(3),
        "checkpointPath": "s3://checkpoints/a/1"}))
with open(f"{tmp}/node.events", "w") as f:
    f.write(line("dev.gpucloud.node.event.v1", spot, {"nodeId": spot, "type": "SPOT_INTERRUPTION",
        "occurredAt": t(3), "deadline": t(123), "detail": "check-panels"}))
    f.write(line("dev.gpucloud.node.event.v1", od, {"nodeId": od, "type": "XID_ERROR", "occurredAt": t(3),
        "gpuIndex": 3, "xid": 79, "detail": "check-panels"}))
with open(f"{tmp}/usage.events", "w") as f:
    f.write(line("dev.gpucloud.usage.v1", a["allocationId"], {"allocationId": a["allocationId"],
        "jobId": f"{run}-job-a", "tenant": "acme", "nodeId": od, "from": t(3), "to": t(33),
        "sku": {"gpuModel": "A100-SXM4-40GB", "migProfile": None, "milliGpu": 1000}, "units": 2,
        "capacityType": "ON_DEMAND", "zone": "local-1a"}))
PY
# Two rounds a few seconds apart: the first sends of each counter series start it in Prometheus, the
# second gives increase() and rate() a step to see.
for round in 1 2; do
  python3 "$TMP/scenario.py" "$RUN_ID" "$ON_DEMAND" "$SPOT" "$TMP" "$round"
  for topic in job.events allocation.events node.events usage.events; do
    bash deploy/local/kafka.sh cli console-producer --topic "$topic" \
      --property parse.key=true --property parse.headers=true <"$TMP/$topic" >>"$TMP/producer.log" 2>&1
  done
  sleep 3
done

# Let Prometheus scrape the result a few times, and the idle window (5 s) pass.
sleep 8
python3 deploy/grafana/check_panels.py "http://127.0.0.1:$PROM_PORT"
