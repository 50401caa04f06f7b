#!/usr/bin/env bash
# Footprint of one node agent sampling 8 GPUs at 1 Hz through the fake libnvidia-ml (JNA binding,
# all the NVML calls a real host makes), publishing to a real broker.
#   node-agent/src/bench/footprint.sh [SECONDS]     (default 60, after a 20 s warm-up)
# Needs: the agent packaged (./mvnw -o -pl node-agent package -DskipTests), gcc, a broker at
# $KAFKA_BOOTSTRAP_SERVERS (default localhost:9092).
# Prints RSS (average and peak over the window), CPU as % of one core, the thread count and the
# load average beside it (the box is shared: compare variants back to back). Telemetry bytes and
# hosts per core come from FleetBenchmark (docs/benchmarks.md, section node-agent). Kills only the
# agent it started.
# Settings, all optional:
#   JAVA=/path/to/bin/java     the runtime (default: java on the PATH)
#   AGENT_APP=DIR              the Quarkus fast-jar folder, absolute or relative to node-agent/
#                              (default: target/quarkus-app)
#   AGENT_JAVA_OPTS="..."      JVM flags (default: the agent's shipped flags, below)
#   AGENT_PROPS="-Dk=v ..."    extra system properties for the agent (e.g. Kafka client settings)
#   FOOTPRINT_DETAIL=1         also run with -XX:NativeMemoryTracking=summary and print, at the end,
#                              the NMT summary, /proc/PID/smaps_rollup, the CPU each thread used in
#                              the window and the threads by name (NMT itself takes ~4 MB: compare
#                              RSS figures without it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SECS="${1:-60}"
JAVA="${JAVA:-java}"
APP="${AGENT_APP:-target/quarkus-app}"
JAR="$APP/quarkus-run.jar"
[ -f "$JAR" ] || { echo "build the agent first: ./mvnw -o -pl node-agent package -DskipTests" >&2; exit 1; }
# The agent's shipped JVM flags (the gpucloud launcher and deploy/k8s/base/node-agent.yaml use the same).
# -XX:TrimNativeHeapInterval needs JDK 17.0.9+ or 21.0.1+.
DEFAULT_OPTS="-XX:+UseSerialGC -Xms8m -Xmx32m -Xmn6m -XX:MaxMetaspaceSize=96m -XX:ReservedCodeCacheSize=24m -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:CompileThresholdScaling=10 -Xss512k -XX:-UsePerfData -XX:TrimNativeHeapInterval=5000"
OPTS="${AGENT_JAVA_OPTS:-$DEFAULT_OPTS}"
PROPS="${AGENT_PROPS:-}"
DETAIL="${FOOTPRINT_DETAIL:-0}"
[ "$DETAIL" = 1 ] && OPTS="-XX:NativeMemoryTracking=summary $OPTS"
WORK="$(mktemp -d /tmp/agent-footprint.XXXXXX)"
gcc -shared -fPIC -O2 -o "$WORK/libnvidia-ml.so.1" src/test/c/fake_nvml.c
echo "gpus=8" > "$WORK/scenario.txt"
ID="footprint-$$"
# shellcheck disable=SC2086
"$JAVA" $OPTS -Dgpucloud.agent.backend=nvml -Dgpucloud.agent.nvml.library-path="$WORK" \
  -Dgpucloud.agent.id="$ID" -Dgpucloud.agent.host.node-id="$ID" -Dgpucloud.agent.telemetry-interval=1s \
  -Dgpucloud.agent.spool.dir="$WORK/spool" -Dgpucloud.agent.runner.dir="$WORK/runs" -Dquarkus.http.port=0 \
  -Dkafka.bootstrap.servers="${KAFKA_BOOTSTRAP_SERVERS:-localhost:9092}" -Dquarkus.log.level=WARN $PROPS \
  -jar "$JAR" >"$WORK/agent.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
sleep 20
kill -0 "$PID" || { echo "agent died:"; tail -20 "$WORK/agent.log"; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
HZ="$(getconf CLK_TCK)"
# per thread: "tid name cpu-ticks" (utime + stime), to see which threads take the CPU
thread_ticks() {
  for t in /proc/"$PID"/task/*; do
    printf '%s %s %s\n' "${t##*/}" "$(tr ' ' '_' <"$t/comm")" "$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null || echo 0)"
  done | sort
}
[ "$DETAIL" = 1 ] && thread_ticks >"$WORK/threads0"
l0="$(load)"; t0="$(ticks)"; s0="$(date +%s.%N)"; sum=0; peak=0; n=0
for _ in $(seq 1 "$SECS"); do
  sleep 1; r="$(rss_kib)"; sum=$((sum + r)); n=$((n + 1)); [ "$r" -gt "$peak" ] && peak="$r"
done
t1="$(ticks)"; s1="$(date +%s.%N)"; l1="$(load)"
threads="$(awk '/^Threads/ {print $2}' "/proc/$PID/status")"
"$JAVA" -version 2>&1 | head -1 | sed 's/^/  runtime: /'
awk -v t0="$t0" -v t1="$t1" -v hz="$HZ" -v s0="$s0" -v s1="$s1" -v sum="$sum" -v n="$n" -v peak="$peak" \
    -v opts="$OPTS" -v props="$PROPS" -v th="$threads" -v l0="$l0" -v l1="$l1" 'BEGIN {
  printf "node-agent footprint: 8 GPUs (fake NVML) sampled at 1 Hz for %.0f s\n", s1 - s0
  printf "  JVM options: %s\n", opts
  if (props != "") printf "  properties: %s\n", props
  printf "  RSS: average %.1f MiB, peak %.1f MiB\n", sum / n / 1024, peak / 1024
  printf "  CPU: %.2f %% of one core\n", (t1 - t0) / hz / (s1 - s0) * 100
  printf "  threads: %s; load average before %s, after %s\n", th, l0, l1 }'
if [ "$DETAIL" = 1 ]; then
  echo "--- smaps_rollup"; grep -E '^(Rss|Pss|Pss_Anon|Pss_File|Shared_Clean|Private_Dirty|Anonymous):' "/proc/$PID/smaps_rollup"
  echo "--- native memory (committed, KB)"
  JCMD="$(dirname "$(command -v "$JAVA")")/jcmd"; [ -x "$JCMD" ] || JCMD=jcmd
  "$JCMD" "$PID" VM.native_memory summary | grep -E '^(Total|-)' | sed -E 's/\(reserved=[0-9]+KB, //; s/\)$//'
  echo "--- CPU by thread over the window (ms; threads that used none left out)"
  thread_ticks >"$WORK/threads1"
  join "$WORK/threads0" "$WORK/threads1" | awk -v hz="$HZ" '{ d = ($5 - $3) * 1000 / hz; if (d > 0) c[$2] += d }
    END { for (k in c) printf "  %7.0f %s\n", c[k], k }' | sort -rn
  echo "--- threads by name"
  for t in /proc/"$PID"/task/*; do cat "$t/comm"; done | sed -E 's/-?[0-9]+$//' | sort | uniq -c | sort -rn
fi
