# Shared helpers for deploy/local scripts. Source it; it sets ROOT, RUN and a few functions.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUN="${GPUCLOUD_RUN_DIR:-$ROOT/.run}"
mkdir -p "$RUN"

say() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# mvn through the wrapper, so a machine with only a JDK works.
mvnw() { "$ROOT/mvnw" -B -q "$@"; }

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && exec 3>&- 3<&-; }

# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND once a second, printing dots. With WAIT_PID_FILE set, it
# gives up at once when the process that file names has ended (a service that failed to start).
wait_for() {
  local what="$1" secs="$2"; shift 2
  local i=0
  printf '  waiting for %s ' "$what" >&2
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ -n "${WAIT_PID_FILE:-}" ] && ! pid_alive "$WAIT_PID_FILE"; then printf ' it exited after %ss\n' "$i" >&2; return 1; fi
    if [ "$i" -ge "$secs" ]; then printf ' gave up after %ss\n' "$secs" >&2; return 1; fi
    printf '.' >&2; sleep 1
  done
  printf ' ready (%ss)\n' "$i" >&2
}

# pid_alive FILE: true when FILE names a running process.
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pid NAME FILE [SECONDS]: SIGTERM, wait up to SECONDS (20), then SIGKILL.
stop_pid() {
  local name="$1" file="$2" secs="${3:-20}"
  if ! pid_alive "$file"; then rm -f "$file"; return 0; fi
  local pid; pid="$(cat "$file")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((secs * 2))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then say "  $name did not stop in $secs s; killing"; kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$file"
  say "  stopped $name (pid $pid)"
}

# private_dir DIR: makes DIR readable by its owner only, when it makes it; one that exists keeps its mode (under
# GPUCLOUD_RUNTIME=podman, a folder the services' containers are let into: gpucloud's share_with_container).
private_dir() { [ -d "$1" ] || { mkdir -p "$1" && chmod 700 "$1"; }; }

# secret FILE: a random 32-character password kept in FILE (mode 600), made once.
secret() {
  if [ ! -s "$1" ]; then
    local random; random="$(head -c 512 /dev/urandom | LC_ALL=C tr -dc 'A-HJ-NP-Za-km-z2-9')"
    (umask 077; printf '%s\n' "${random:0:32}" >"$1")
  fi
  cat "$1"
}
