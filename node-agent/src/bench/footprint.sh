#!/usr/bin/env bash
# Footprint of one node agent sampling 8 GPUs at 1 Hz through the fake libnvidia-ml (JNA binding,
# all the NVML calls a real host makes), publishing to a real broker.
#   node-agent/src/bench/footprint.sh [SECONDS]     (default 60, after a 20 s warm-up)
# Needs: the agent packaged (./mvnw -o -pl node-agent package -DskipTests), gcc, a broker at
# $KAFKA_BOOTSTRAP_SERVERS (default localhost:9092). JVM flags: $AGENT_JAVA_OPTS (default below).
# Prints RSS (average and peak over the window) and CPU as % of one core. Telemetry bytes and
# hosts per core come from FleetBenchmark (docs/benchmarks.md, section node-agent). Kills only the
# agent it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SECS="${1:-60}"
JAR=target/quarkus-app/quarkus-run.jar
[ -f "$JAR" ] || { echo "build the agent first: ./mvnw -o -pl node-agent package -DskipTests" >&2; exit 1; }
OPTS="${AGENT_JAVA_OPTS:--XX:+UseSerialGC -Xms16m -Xmx48m -XX:MaxMetaspaceSize=96m -XX:ReservedCodeCacheSize=32m -XX:TieredStopAtLevel=1 -Xss512k -XX:CICompilerCount=1}"
WORK="$(mktemp -d /tmp/agent-footprint.XXXXXX)"
gcc -shared -fPIC -O2 -o "$WORK/libnvidia-ml.so.1" src/test/c/fake_nvml.c
echo "gpus=8" > "$WORK/scenario.txt"
ID="footprint-$$"
# shellcheck disable=SC2086
java $OPTS -Dgpucloud.agent.backend=nvml -Dgpucloud.agent.nvml.library-path="$WORK" \
  -Dgpucloud.agent.id="$ID" -Dgpucloud.agent.host.node-id="$ID" -Dgpucloud.agent.telemetry-interval=1s \
  -Dgpucloud.agent.spool.dir="$WORK/spool" -Dgpucloud.agent.runner.dir="$WORK/runs" -Dquarkus.http.port=0 \
  -Dkafka.bootstrap.servers="${KAFKA_BOOTSTRAP_SERVERS:-localhost:9092}" -Dquarkus.log.level=WARN \
  -jar "$JAR" >"$WORK/agent.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true' EXIT
sleep 20
kill -0 "$PID" || { echo "agent died:"; tail -20 "$WORK/agent.log"; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }
HZ="$(getconf CLK_TCK)"
t0="$(ticks)"; s0="$(date +%s.%N)"; sum=0; peak=0; n=0
for _ in $(seq 1 "$SECS"); do
  sleep 1; r="$(rss_kib)"; sum=$((sum + r)); n=$((n + 1)); [ "$r" -gt "$peak" ] && peak="$r"
done
t1="$(ticks)"; s1="$(date +%s.%N)"
awk -v t0="$t0" -v t1="$t1" -v hz="$HZ" -v s0="$s0" -v s1="$s1" -v sum="$sum" -v n="$n" -v peak="$peak" -v opts="$OPTS" 'BEGIN {
  printf "node-agent footprint: 8 GPUs (fake NVML) sampled at 1 Hz for %.0f s\n", s1 - s0
  printf "  JVM options: %s\n", opts
  printf "  RSS: average %.1f MiB, peak %.1f MiB\n", sum / n / 1024, peak / 1024
  printf "  CPU: %.2f %% of one core\n", (t1 - t0) / hz / (s1 - s0) * 100 }'
