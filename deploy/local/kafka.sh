#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft) assembled from Maven Central jars, run as its own JVM.
#   kafka.sh start          format (first time), start, wait until ready, create gpucloud's topics
#   kafka.sh stop           stop it by pid
#   kafka.sh status         say whether it runs
#   kafka.sh topics         create any missing gpucloud topic
#   kafka.sh cli TOOL ARGS  run one of Kafka's own tools on the same classpath, e.g.
#                           kafka.sh cli console-consumer --topic job.events --from-beginning
# Environment: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_HEAP (512m).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_HEAP="${KAFKA_HEAP:-512m}"
HOME_DIR="$RUN/kafka"
LIB="$ROOT/deploy/local/kafka/target/lib"
PID="$HOME_DIR/kafka.pid"
BOOTSTRAP="localhost:$KAFKA_PORT"

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
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$LIB/*" dev.gpucloud.contracts.kafka.TopicProvisioner "$BOOTSTRAP" >&2
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
  if pid_alive "$PID"; then say "kafka already running (pid $(cat "$PID")) on $BOOTSTRAP"; return 0; fi
  if port_open localhost "$KAFKA_PORT"; then
    say "something already listens on $BOOTSTRAP: adopting it as the broker; it holds $(survey)"
    ensure_topics; return 0
  fi
  assemble
  mkdir -p "$HOME_DIR/data" "$HOME_DIR/logs"
  cat > "$HOME_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://localhost:$KAFKA_PORT,CONTROLLER://localhost:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://localhost:$KAFKA_PORT,CONTROLLER://localhost:$KAFKA_CONTROLLER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$HOME_DIR/data
num.partitions=3
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.retention.hours=168
PROPS
  if [ ! -f "$HOME_DIR/data/meta.properties" ]; then
    say "formatting KRaft storage in $HOME_DIR/data"
    java_kafka kafka.tools.StorageTool format --standalone \
      -t "$(java_kafka kafka.tools.StorageTool random-uuid)" -c "$HOME_DIR/server.properties" >"$HOME_DIR/logs/format.log" 2>&1 \
      || die "kafka storage format failed: see $HOME_DIR/logs/format.log"
  fi
  say "starting kafka on $BOOTSTRAP (log: $HOME_DIR/logs/server.log)"
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
  exec java -Xmx256m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$LIB/*" "$main" "${target[@]}" "$@"
}

case "${1:-}" in
  start) start ;;
  stop) stop_pid kafka "$PID" ;;
  status) if pid_alive "$PID"; then echo "kafka running (pid $(cat "$PID")) on $BOOTSTRAP"; else echo "kafka not running"; exit 1; fi ;;
  topics) ensure_topics ;;
  cli) shift; cli "$@" ;;
  *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
