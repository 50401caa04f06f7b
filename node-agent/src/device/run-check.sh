#!/usr/bin/env bash
# On a GPU machine without Java: reads every GPU through the agent's NVML backend (JNA) and through
# nvidia-smi, prints both and where they differ (dev.gpucloud.agent.nvml.NvmlCompare), then the
# driver's own nvidia-smi summary for the record. Exit code: 0 identity matches, 1 mismatch,
# 2 a backend could not be opened.
#   run-check.sh [path to libnvidia-ml.so.1] [path to nvidia-smi]
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$HERE/runtime/bin/java" -Xmx64m -cp "$HERE/lib/*" dev.gpucloud.agent.nvml.NvmlCompare "${1:-}" "${2:-nvidia-smi}"
rc=$?
echo "--- nvidia-smi -L"
"${2:-nvidia-smi}" -L || true
exit "$rc"
