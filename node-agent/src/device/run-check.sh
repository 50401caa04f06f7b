#!/usr/bin/env bash
# On a GPU machine without Java: reads every GPU through the agent's NVML backend (JNA) and through
# nvidia-smi, prints both and where they differ (dev.gpucloud.agent.nvml.NvmlCompare), then the MIG
# side read only (GPM support, MIG instances with their placement and per-MIG engine activity over
# one second; it never creates or destroys an instance), then the driver's own nvidia-smi summary
# and MIG listings for the record. Exit code: 0 identity matches, 1 mismatch,
# 2 a backend could not be opened.
#   run-check.sh [path to libnvidia-ml.so.1] [path to nvidia-smi]
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$HERE/runtime/bin/java" -Xmx64m -cp "$HERE/lib/*" dev.gpucloud.agent.nvml.NvmlCompare "${1:-}" "${2:-nvidia-smi}"
rc=$?
echo "--- nvidia-smi -L"
"${2:-nvidia-smi}" -L || true
echo "--- nvidia-smi --query-gpu=index,name,mig.mode.current"
"${2:-nvidia-smi}" --query-gpu=index,name,mig.mode.current --format=csv,noheader || true
if "${2:-nvidia-smi}" --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null | grep -q Enabled; then
  echo "--- nvidia-smi mig -lgi (GPU instances and their placement)"
  "${2:-nvidia-smi}" mig -lgi || true
  echo "--- nvidia-smi mig -lgipp (placements NVIDIA allows)"
  "${2:-nvidia-smi}" mig -lgipp || true
fi
exit "$rc"
