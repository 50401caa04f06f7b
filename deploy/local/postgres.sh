#!/usr/bin/env bash
# PostgreSQL for gpucloud, with one database per service that owns state.
#   postgres.sh start    use the server at PGHOST:PGPORT if it answers; else start the machine's
#                        Debian cluster (pg_ctlcluster 15 main start); else run an embedded one
#                        (io.zonky.test:embedded-postgres from Maven Central). Then create the role
#                        and the databases if missing.
#   postgres.sh stop     stop what start started (nothing if it found a server already running)
#   postgres.sh status
#   postgres.sh psql DB  a psql shell on one of gpucloud's databases
# Environment: PGHOST (localhost), PGPORT (5432), GPUCLOUD_DB_USER / GPUCLOUD_DB_PASSWORD (gpucloud),
# GPUCLOUD_SCHEDULER_DB / GPUCLOUD_BILLING_DB (gpucloud_scheduler, gpucloud_billing; with these
# default names the tests' databases gpucloud_*_test are created too).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PGHOST="${PGHOST:-localhost}"
PGPORT="${PGPORT:-5432}"
DB_USER="${GPUCLOUD_DB_USER:-gpucloud}"
DB_PASSWORD="${GPUCLOUD_DB_PASSWORD:-gpucloud}"
SCHEDULER_DB="${GPUCLOUD_SCHEDULER_DB:-gpucloud_scheduler}"
BILLING_DB="${GPUCLOUD_BILLING_DB:-gpucloud_billing}"
DATABASES=("$SCHEDULER_DB" "$BILLING_DB")
if [ "$SCHEDULER_DB" = gpucloud_scheduler ]; then DATABASES+=(gpucloud_scheduler_test gpucloud_billing_test); fi
HOME_DIR="$RUN/postgres"
STARTED="$HOME_DIR/started-by-us"
EMBEDDED_PID="$HOME_DIR/embedded.pid"
EMBEDDED_LIB="$ROOT/deploy/local/embedded-postgres/target/lib"
mkdir -p "$HOME_DIR"

answers() { port_open "$PGHOST" "$PGPORT"; }
# The Debian cluster listens on 5432; another port means another server.
debian_cluster() { [ "$PGPORT" = 5432 ] && command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql/15/main ]; }

# superuser_sql SQL: runs SQL as a superuser of whichever server we have.
superuser_sql() {
  # ours, or (on a port other than the Debian cluster's) one that another run folder started: the
  # embedded server lets its superuser in without a password
  if [ -f "$EMBEDDED_PID" ] || { [ "$PGPORT" != 5432 ] && [ -z "${PGSUPERPASSWORD:-}" ] && [ -f "$EMBEDDED_LIB/.complete" ]; }; then
    java -cp "$EMBEDDED_LIB/*" "$ROOT/deploy/local/embedded-postgres/Sql.java" "$PGPORT" "$1"
  elif [ "$PGHOST" = localhost ] && command -v runuser >/dev/null 2>&1 && id postgres >/dev/null 2>&1 \
      && [ "$(id -u)" = 0 ]; then
    # The local cluster's socket with peer authentication: no password, never a prompt. From /, because
    # psql as postgres first tries to enter the caller's folder, which that user may not be allowed to.
    (cd / && runuser -u postgres -- psql -w -v ON_ERROR_STOP=1 -p "$PGPORT" -qAt -d postgres -c "$1" </dev/null)
  else
    PGPASSWORD="${PGSUPERPASSWORD:-}" psql -w -v ON_ERROR_STOP=1 -h "$PGHOST" -p "$PGPORT" \
      -U "${PGSUPERUSER:-postgres}" -qAt -d postgres -c "$1" </dev/null
  fi
}

bootstrap() {
  local exists
  exists="$(superuser_sql "select 1 from pg_roles where rolname = '$DB_USER'")"
  if [ "$exists" != "1" ]; then
    superuser_sql "create role $DB_USER login password '$DB_PASSWORD'" >/dev/null
    say "  created role $DB_USER"
  fi
  for db in "${DATABASES[@]}"; do
    exists="$(superuser_sql "select 1 from pg_database where datname = '$db'")"
    if [ "$exists" != "1" ]; then
      superuser_sql "create database $db owner $DB_USER" >/dev/null
      say "  created database $db"
    fi
  done
}

start_embedded() {
  if [ ! -f "$EMBEDDED_LIB/.complete" ]; then
    say "assembling embedded PostgreSQL from Maven Central"
    mvnw -f "$ROOT/deploy/local/embedded-postgres/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$EMBEDDED_LIB" -DincludeScope=runtime
    touch "$EMBEDDED_LIB/.complete"
  fi
  say "starting embedded PostgreSQL on port $PGPORT (log: $HOME_DIR/embedded.log)"
  nohup java -Xmx256m -cp "$EMBEDDED_LIB/*" "$ROOT/deploy/local/embedded-postgres/EmbeddedPostgresMain.java" \
    "$PGPORT" "$HOME_DIR/data" >"$HOME_DIR/embedded.log" 2>&1 &
  echo $! >"$EMBEDDED_PID"
  wait_for "embedded PostgreSQL" 120 grep -q "ready on port" "$HOME_DIR/embedded.log" \
    || { tail -20 "$HOME_DIR/embedded.log" >&2; die "embedded PostgreSQL did not start"; }
}

# holds: the gpucloud databases a server that was already running has, for a person deciding whether to use it.
holds() {
  superuser_sql "select 'databases ' || coalesce(string_agg(datname, ', ' order by datname), 'none of gpucloud''s yet')
    from pg_database where datname like 'gpucloud%'" 2>/dev/null || echo "(not readable as a superuser from here)"
}

start() {
  if answers && pid_alive "$EMBEDDED_PID"; then
    say "embedded PostgreSQL already running (pid $(cat "$EMBEDDED_PID")) on port $PGPORT"
  elif answers; then
    say "PostgreSQL already answers on $PGHOST:$PGPORT: adopting it; it holds $(holds)"
  elif [ "$PGHOST" = localhost ] && debian_cluster; then
    say "starting the machine's PostgreSQL 15 cluster (pg_ctlcluster 15 main start)"
    (cd / && pg_ctlcluster 15 main start)
    touch "$STARTED"
    wait_for "PostgreSQL on $PGHOST:$PGPORT" 30 answers || die "PostgreSQL did not come up"
  elif [ "$PGHOST" = localhost ]; then
    start_embedded
  else
    die "no PostgreSQL answers on $PGHOST:$PGPORT"
  fi
  bootstrap
}

stop() {
  if [ -f "$EMBEDDED_PID" ]; then stop_pid "embedded PostgreSQL" "$EMBEDDED_PID"; fi
  if [ -f "$STARTED" ]; then
    (cd / && pg_ctlcluster 15 main stop) && say "  stopped PostgreSQL 15 cluster"
    rm -f "$STARTED"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then echo "PostgreSQL answers on $PGHOST:$PGPORT"; else echo "PostgreSQL not reachable on $PGHOST:$PGPORT"; exit 1; fi ;;
  psql) shift; PGPASSWORD="$DB_PASSWORD" exec psql -h "$PGHOST" -p "$PGPORT" -U "$DB_USER" "${1:-$SCHEDULER_DB}" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
