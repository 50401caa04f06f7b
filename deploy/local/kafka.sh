#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft) assembled from Maven Central jars, run as its own JVM.
#   kafka.sh start          format (first time), start, wait until ready, create gpucloud's topics
#   kafka.sh stop           stop it by pid
#   kafka.sh status         say whether it runs
#   kafka.sh topics         create any missing gpucloud topic
#   kafka.sh provision P... give principals (scheduler, billing, metrics, auditor, agent:ID[=HOST,...]) their
#                           SCRAM logins and ACLs; an agent is also enrolled for its hosts (names or globs, its id
#                           when none are given): $RUN/kafka/auth/agent-ID.enrolment, minted with the stack's
#                           enrolment key $RUN/kafka/auth/enrolment.key (docs/security.md, "Enrolment")
#   kafka.sh impersonate agent-ID HOST
#                           as that agent, with its own enrolment, report a host; say whether a reader refused it
#   kafka.sh security       say how the broker authenticates clients: sasl or plaintext
#   kafka.sh probe AS write|read TOPIC
#                           try one write or read as AS (-: no login, admin, or a provisioned principal) and
#                           say whether the broker allowed it (exit 0) or refused it (exit 1)
#   kafka.sh cli TOOL ARGS  run one of Kafka's own tools on the same classpath, e.g.
#                           kafka.sh cli console-consumer --topic job.events --from-beginning
# Environment: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_HEAP (512m), KAFKA_SECURITY (plaintext,
# or sasl: both listeners take TLS 1.3 only, with a certificate from the stack's own CA (tls.sh), and every
# client logs in with SASL (SCRAM-SHA-512 for services and agents, PLAIN for the broker's own admin, whose
# login is in $RUN/kafka/auth/admin.properties); KRaft's StandardAuthorizer allows each only what its ACLs
# say. ./gpucloud up starts it so. docs/security.md, "Kafka").
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_HEAP="${KAFKA_HEAP:-512m}"
HOME_DIR="$RUN/kafka"
LIB="$ROOT/deploy/local/kafka/target/lib"
PID="$HOME_DIR/kafka.pid"
BOOTSTRAP="localhost:$KAFKA_PORT"
KAFKA_SECURITY="${KAFKA_SECURITY:-plaintext}"
AUTH="$HOME_DIR/auth"
ADMIN_CONFIG="$AUTH/admin.properties"
MARKER="$HOME_DIR/security"
case "$KAFKA_SECURITY" in plaintext|sasl) ;; *) die "KAFKA_SECURITY must be plaintext or sasl, was '$KAFKA_SECURITY'" ;; esac

# security: how the broker this run folder started authenticates clients (plaintext for one it adopted).
security() { if [ -f "$MARKER" ] && port_open localhost "$KAFKA_PORT"; then cat "$MARKER"; else echo plaintext; fi; }
# login_config: the admin's client settings file where the broker asks for a login, else nothing.
login_config() { [ "$(security)" = sasl ] && echo "$ADMIN_CONFIG" || true; }

# admin_login: the broker's admin, who logs in with SASL/PLAIN and is its only super user; the password is
# made once and kept with the broker's data, readable by its owner only.
admin_login() {
  private_dir "$AUTH"
  if [ ! -s "$AUTH/admin.password" ]; then
    local random; random="$(head -c 512 /dev/urandom | LC_ALL=C tr -dc 'A-HJ-NP-Za-km-z2-9')"
    (umask 077; printf '%s\n' "${random:0:32}" >"$AUTH/admin.password")
  fi
  local password; password="$(cat "$AUTH/admin.password")"
  bash "$ROOT/deploy/local/tls.sh" server kafka
  (umask 077; cat >"$ADMIN_CONFIG" <<CONF
security.protocol=SASL_SSL
ssl.truststore.type=PEM
ssl.truststore.location=$RUN/tls/ca.pem
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$password";
CONF
  )
}

# listener_properties: the broker's listeners, plaintext or with SASL and ACLs.
listener_properties() {
  if [ "$KAFKA_SECURITY" = plaintext ]; then
    cat <<PROPS
listeners=PLAINTEXT://localhost:$KAFKA_PORT,CONTROLLER://localhost:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://localhost:$KAFKA_PORT,CONTROLLER://localhost:$KAFKA_CONTROLLER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
auto.create.topics.enable=true
PROPS
    return 0
  fi
  local password keypass; password="$(cat "$AUTH/admin.password")"; keypass="$(cat "$RUN/tls/kafka.pass")"
  local plain="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"$password\" user_admin=\"$password\";"
  cat <<PROPS
listeners=CLIENT://localhost:$KAFKA_PORT,CONTROLLER://localhost:$KAFKA_CONTROLLER_PORT
advertised.listeners=CLIENT://localhost:$KAFKA_PORT,CONTROLLER://localhost:$KAFKA_CONTROLLER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=CLIENT
listener.security.protocol.map=CONTROLLER:SASL_SSL,CLIENT:SASL_SSL
ssl.keystore.type=PKCS12
ssl.keystore.location=$RUN/tls/kafka.p12
ssl.keystore.password=$keypass
ssl.key.password=$keypass
ssl.truststore.type=PEM
ssl.truststore.location=$RUN/tls/ca.pem
# clients log in with SASL, so none needs a certificate; one that presents a certificate not from the stack's CA
# is refused in the handshake (docs/security.md, "Kafka")
listener.name.client.ssl.client.auth=requested
ssl.enabled.protocols=TLSv1.3
ssl.protocol=TLSv1.3
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.client.plain.sasl.jaas.config=$plain
listener.name.client.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=$plain
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin
allow.everyone.if.no.acl.found=false
auto.create.topics.enable=false
PROPS
}

assemble() {
  if [ ! -f "$LIB/.complete" ]; then
    say "assembling Apache Kafka from Maven Central into deploy/local/kafka/target/lib"
    mvnw -f "$ROOT/deploy/local/kafka/pom.xml" dependency:copy-dependencies -DoutputDirectory="$LIB" \
      -DincludeScope=runtime
    touch "$LIB/.complete"
  fi
}

java_kafka() { java -Xmx"$KAFKA_HEAP" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$LIB/*" "$@"; }

contracts_jar() { ls "$ROOT"/contracts/target/contracts-*.jar 2>/dev/null | grep -v sources | head -1 || true; }

ensure_topics() {
  local jar; jar="$(contracts_jar)"
  if [ -z "$jar" ]; then
    say "  contracts jar not built yet: topics will be created by the first build (./mvnw -pl contracts install)"
    return 0
  fi
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.TopicProvisioner \
    "$BOOTSTRAP" $(login_config) >&2
}

# provision PRINCIPAL...: each principal's SCRAM login (its password in $AUTH/NAME.password) and ACLs.
provision() {
  if [ "$(security)" != sasl ]; then say "  the broker on $BOOTSTRAP takes no logins: no principals to provision"; return 0; fi
  local jar; jar="$(contracts_jar)"
  [ -n "$jar" ] || die "contracts jar not built: ./mvnw -pl contracts package"
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.KafkaAccess \
    provision "$BOOTSTRAP" "$ADMIN_CONFIG" "$AUTH" "$@" >&2
}

# setup-external BOOTSTRAP ADMIN_CONFIG OUT_DIR [--replication-factor N] [--acls-only] [--namespace NS]: a broker
# gpucloud does not run, made ready for deploy/k8s's components/external-kafka (BrokerSetup; docs/kubernetes.md).
setup_external() {
  [ "$#" -ge 3 ] || die "usage: gpucloud kafka setup-external BOOTSTRAP ADMIN_CONFIG OUT_DIR [--replication-factor N] [--acls-only] [--namespace NS]"
  local jar; jar="$(contracts_jar)"
  [ -n "$jar" ] || die "contracts jar not built: ./mvnw -pl contracts package"
  assemble >&2
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.BrokerSetup "$@"
}

# survey: the cluster id of a broker that was already running and the hosts its gpu.inventory describes.
survey() {
  local jar; jar="$(contracts_jar)"
  if [ -z "$jar" ]; then echo "(unknown: contracts jar not built)"; return 0; fi
  assemble >&2
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.BrokerSurvey \
    "$BOOTSTRAP" 2>/dev/null || echo "(it did not answer a survey in 15 s)"
}

start() {
  if pid_alive "$PID"; then
    say "kafka already running (pid $(cat "$PID")) on $BOOTSTRAP, clients: $(security)"
    [ "$(security)" = "$KAFKA_SECURITY" ] || say "  (it was started with KAFKA_SECURITY=$(security); stop it to change that)"
    return 0
  fi
  if port_open localhost "$KAFKA_PORT"; then
    say "something already listens on $BOOTSTRAP: adopting it as the broker; it holds $(survey)"
    ensure_topics; return 0
  fi
  assemble
  mkdir -p "$HOME_DIR/data" "$HOME_DIR/logs"
  [ "$KAFKA_SECURITY" = plaintext ] || admin_login
  (umask 077; cat > "$HOME_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:$KAFKA_CONTROLLER_PORT
$(listener_properties)
log.dirs=$HOME_DIR/data
num.partitions=3
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=168
PROPS
  )
  echo "$KAFKA_SECURITY" >"$MARKER"
  if [ ! -f "$HOME_DIR/data/meta.properties" ]; then
    say "formatting KRaft storage in $HOME_DIR/data"
    java_kafka kafka.tools.StorageTool format --standalone \
      -t "$(java_kafka kafka.tools.StorageTool random-uuid)" -c "$HOME_DIR/server.properties" >"$HOME_DIR/logs/format.log" 2>&1 \
      || die "kafka storage format failed: see $HOME_DIR/logs/format.log"
  fi
  say "starting kafka on $BOOTSTRAP, clients: $KAFKA_SECURITY (log: $HOME_DIR/logs/server.log)"
  nohup java -Xmx"$KAFKA_HEAP" -Xms256m -XX:+UseG1GC -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
    -Dorg.slf4j.simpleLogger.log.kafka=warn -Dorg.slf4j.simpleLogger.log.org.apache.kafka=warn \
    -Dorg.slf4j.simpleLogger.log.state.change.logger=warn \
    -cp "$LIB/*" kafka.Kafka "$HOME_DIR/server.properties" >"$HOME_DIR/logs/server.log" 2>&1 &
  echo $! >"$PID"
  if ! wait_for "kafka on $BOOTSTRAP" 60 port_open localhost "$KAFKA_PORT"; then
    tail -20 "$HOME_DIR/logs/server.log" >&2; die "kafka did not start"
  fi
  ensure_topics
}

probe() {
  [ "$#" -eq 3 ] || die "usage: kafka.sh probe -|admin|PRINCIPAL write|read TOPIC"
  local as="$1" config=-
  if [ "$as" != - ]; then
    config="$AUTH/$as.properties"
    [ -f "$config" ] || die "no login for '$as' in $AUTH (kafka.sh provision gives principals theirs)"
  fi
  local jar; jar="$(contracts_jar)"
  [ -n "$jar" ] || die "contracts jar not built: ./mvnw -pl contracts package"
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=off -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.AccessProbe \
    "$BOOTSTRAP" "$config" "$2" "$3"
}

# impersonate AGENT HOST: as agent principal AGENT, with its own enrolment, report host HOST; say what the
# readers did with it (a reader that checks enrolment dead-letters it with the reason: exit 0).
impersonate() {
  [ "$#" -eq 2 ] || die "usage: kafka.sh impersonate agent-ID HOST"
  local config="$AUTH/$1.properties" credential="$AUTH/$1.enrolment"
  [ -f "$config" ] && [ -f "$credential" ] || die "no login or enrolment for '$1' in $AUTH (kafka.sh provision agent:ID)"
  local jar; jar="$(contracts_jar)"
  [ -n "$jar" ] || die "contracts jar not built: ./mvnw -pl contracts package"
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=off -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.EnrolmentProbe \
    "$BOOTSTRAP" "$config" "$credential" "$ADMIN_CONFIG" "$2"
}

cli() {
  assemble
  local tool="${1:-}"; shift || true
  local main
  case "$tool" in
    console-consumer) main=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
    console-producer) main=org.apache.kafka.tools.ConsoleProducer ;;
    topics) main=org.apache.kafka.tools.TopicCommand ;;
    consumer-groups) main=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
    producer-perf-test) main=org.apache.kafka.tools.ProducerPerformance ;;
    consumer-perf-test) main=org.apache.kafka.tools.ConsumerPerformance ;;
    get-offsets) main=org.apache.kafka.tools.GetOffsetShell ;;
    *) die "unknown tool '$tool': console-consumer, console-producer, topics, consumer-groups, producer-perf-test, consumer-perf-test, get-offsets" ;;
  esac
  local target=(--bootstrap-server "$BOOTSTRAP")
  # The perf tools take their broker address in their own options.
  case "$tool" in producer-perf-test|consumer-perf-test) target=() ;; esac
  # on a broker that asks for logins, the tools log in as its admin
  local login; login="$(login_config)"
  if [ -n "$login" ]; then
    case "$tool" in
      console-consumer) target+=(--consumer.config "$login") ;;
      console-producer) target+=(--producer.config "$login") ;;
      topics|consumer-groups|get-offsets) target+=(--command-config "$login") ;;
    esac
  fi
  exec java -Xmx256m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$LIB/*" "$main" "${target[@]}" "$@"
}

case "${1:-}" in
  start) start ;;
  stop) stop_pid kafka "$PID" ;;
  status) if pid_alive "$PID"; then echo "kafka running (pid $(cat "$PID")) on $BOOTSTRAP"; else echo "kafka not running"; exit 1; fi ;;
  topics) ensure_topics ;;
  provision) shift; provision "$@" ;;
  setup-external) shift; setup_external "$@" ;;
  impersonate) shift; impersonate "$@" ;;
  security) security ;;
  probe) shift; probe "$@" ;;
  cli) shift; cli "$@" ;;
  *) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
