#!/usr/bin/env bash
# Scrape size of every metrics-service shard of the running ./gpucloud stack, as Prometheus scrapes it:
# bytes (OpenMetrics and text 0.0.4), series (sample lines), dcgm series, GPUs and time to answer, per
# shard, and the largest. Prints figures; asserts nothing. For example (docs/benchmarks.md, metrics):
#
#   METRICS_SHARDS=6 GPUCLOUD_AGENT_SIM_FLEET=a100x8:250 GPUCLOUD_AGENT_JAVA_OPTS=-Xmx512m ./gpucloud up --fresh
#   benchmarks/metrics-scrape.sh            # once every host reports; ./gpucloud down after
#
# It reads the stack's ports and shard count from its stack.env (the run folder ./gpucloud up wrote).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="${GPUCLOUD_RUN_DIR:-$ROOT/.run}"
RUN="$BASE"; [ -s "$BASE/active" ] && RUN="$(cat "$BASE/active")"
[ -f "$RUN/stack.env" ] || { echo "metrics-scrape: no running stack in $RUN (./gpucloud up first)" >&2; exit 1; }
# shellcheck disable=SC1091
set -a; source "$RUN/stack.env"; set +a
PORT="${GPUCLOUD_METRICS_PORT:-8083}"; SHARDS="${METRICS_SHARDS:-1}"
CURL=(curl -fsS --max-time 30); [ "${GPUCLOUD_TLS:-on}" = on ] && CURL+=(--cacert "$RUN/tls/ca.pem")
SCHEME=https; [ "${GPUCLOUD_TLS:-on}" = on ] || SCHEME=http
TOKEN=(); [ -s "$RUN/auth/scrape.token" ] && TOKEN=(-H "Authorization: Bearer $(cat "$RUN/auth/scrape.token")")
OPEN='application/openmetrics-text; version=1.0.0; charset=utf-8'
tmp="$(mktemp)"; trap 'rm -f "$tmp"' EXIT
largest=0
for ((i = 0; i < SHARDS; i++)); do
  url="$SCHEME://localhost:$((PORT + 10 * i))/q/metrics"
  open_stats="$("${CURL[@]}" "${TOKEN[@]}" -H "Accept: $OPEN" -o "$tmp" -w '%{size_download} %{time_total}' "$url")"
  text_bytes="$("${CURL[@]}" "${TOKEN[@]}" -H 'Accept: text/plain' -o /dev/null -w '%{size_download}' "$url")"
  series="$(grep -vc '^#' "$tmp" || true)"
  dcgm="$(grep -c '^DCGM_' "$tmp" || true)"
  gpus="$(grep '^DCGM_FI_DEV_GPU_UTIL{' "$tmp" | grep -o 'UUID="[^"]*"' | sort -u | wc -l)"
  read -r open_bytes seconds <<<"$open_stats"
  printf 'shard %d of %d (:%d): OpenMetrics %.2f MiB (%d bytes) in %.0f ms, text %.2f MiB; %d series, %d dcgm, %d GPUs\n' \
    "$i" "$SHARDS" "$((PORT + 10 * i))" "$(echo "$open_bytes / 1048576" | bc -l)" "$open_bytes" \
    "$(echo "$seconds * 1000" | bc -l)" "$(echo "$text_bytes / 1048576" | bc -l)" "$series" "$dcgm" "$gpus"
  [ "$open_bytes" -gt "$largest" ] && largest="$open_bytes"
done
printf 'largest scrape: %.2f MiB (%d bytes)\n' "$(echo "$largest / 1048576" | bc -l)" "$largest"
