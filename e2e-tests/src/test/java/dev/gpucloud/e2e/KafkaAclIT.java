package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.AccessProbe;
import dev.gpucloud.contracts.kafka.AccessProbe.Outcome;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EnrolmentSigner;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.kafka.KafkaAccess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The broker that ./gpucloud up starts, with real principals: deploy/local/kafka.sh starts it with SASL and
 * KRaft's StandardAuthorizer on ports of its own, provisions the services and two agents, and every principal
 * tries to write and read every topic. What each may do is written here from the words, not read from
 * {@link KafkaAccess}, so a change to the ACLs that lets an agent write commands fails this test.
 */
class KafkaAclIT {

    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path RUN_DIR = ROOT.resolve("e2e-tests/target/acl-run");
    static final Path AUTH = RUN_DIR.resolve("kafka/auth");
    static int port;
    static int controllerPort;
    static String bootstrap;

    /** What each principal may write: its own topics and the dead letters of what it reads. */
    static final Map<String, Set<String>> WRITES = Map.of(
            "scheduler", Set.of("job.events", "node.commands", "audit.events", "gpu.inventory.dlq", "gpu.telemetry.dlq",
                    "node.events.dlq", "allocation.events.dlq", "job.requests.dlq", "job.logs.dlq"),
            "billing", Set.of("usage.events.dlq", "audit.events"),
            "auditor", Set.of(),
            "metrics", Set.of("gpu.advisories", "gpu.telemetry.dlq", "gpu.inventory.dlq", "job.events.dlq",
                    "allocation.events.dlq", "node.events.dlq", "usage.events.dlq"),
            "agent-a1", Set.of("gpu.inventory", "gpu.telemetry", "node.events", "allocation.events", "usage.events",
                    "job.logs", "node.commands.dlq"));
    /** What each principal may read. */
    static final Map<String, Set<String>> READS = Map.of(
            "scheduler", Set.of("gpu.inventory", "gpu.telemetry", "node.events", "allocation.events", "job.requests",
                    "job.logs"),
            "billing", Set.of("usage.events"),
            "auditor", Set.of("audit.events"),
            "metrics", Set.of("gpu.telemetry", "gpu.inventory", "job.events", "allocation.events", "node.events",
                    "usage.events"),
            "agent-a1", Set.of("node.commands"));

    @BeforeAll
    static void startSecuredBroker() throws Exception {
        port = freePort();
        controllerPort = freePort();
        bootstrap = "localhost:" + port;
        kafkaSh("start");
        kafkaSh("provision", "scheduler", "billing", "metrics", "auditor", "agent:a1=a1-*", "agent:a2");
    }

    @AfterAll
    static void stopBroker() throws Exception {
        kafkaSh("stop");
    }

    @Test
    void each_principal_writes_and_reads_exactly_what_its_acls_allow() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (String principal : WRITES.keySet()) {
            Properties login = login(principal);
            for (Topic<?> topic : Topics.all()) {
                for (String name : List.of(topic.name(), topic.deadLetterTopic())) {
                    Outcome outcome = AccessProbe.write(bootstrap, login, name);
                    Outcome expected = WRITES.get(principal).contains(name) ? Outcome.ALLOWED : Outcome.NOT_AUTHORIZED;
                    if (outcome != expected) {
                        wrong.add(principal + " write " + name + ": " + outcome + ", expected " + expected);
                    }
                }
                Outcome outcome = AccessProbe.read(bootstrap, login, topic.name());
                Outcome expected = READS.get(principal).contains(topic.name()) ? Outcome.ALLOWED : Outcome.NOT_AUTHORIZED;
                if (outcome != expected) {
                    wrong.add(principal + " read " + topic.name() + ": " + outcome + ", expected " + expected);
                }
            }
        }
        assertThat(wrong).as("what the broker did that the ACL table does not say").isEmpty();
        // nobody above may write job.requests: every refused write left nothing behind
        assertThat(endOffsets(Topics.JOB_REQUESTS.name())).isZero();
    }

    @Test
    void a_forged_usage_record_without_a_login_or_with_a_wrong_password_is_refused_and_lands_nowhere()
            throws Exception {
        long before = endOffsets(Topics.USAGE_EVENTS.name());
        assertThat(AccessProbe.write(bootstrap, new Properties(), Topics.USAGE_EVENTS.name()))
                .isEqualTo(Outcome.NO_ANSWER);
        Properties admin = KafkaAccess.clientConfig(AUTH.resolve("admin.properties"));
        Properties wrongPassword = new Properties();
        wrongPassword.putAll(KafkaAccess.scramClient("agent-a1", "not-its-password", admin));
        assertThat(AccessProbe.write(bootstrap, wrongPassword, Topics.USAGE_EVENTS.name()))
                .isEqualTo(Outcome.AUTHENTICATION_FAILED);
        Properties unknownUser = new Properties();
        unknownUser.putAll(KafkaAccess.scramClient("agent-nobody", "whatever", admin));
        assertThat(AccessProbe.write(bootstrap, unknownUser, Topics.NODE_COMMANDS.name()))
                .isEqualTo(Outcome.AUTHENTICATION_FAILED);
        assertThat(endOffsets(Topics.USAGE_EVENTS.name())).isEqualTo(before);
    }

    @Test
    void a_plaintext_client_or_one_that_does_not_trust_the_stacks_ca_gets_nowhere() throws Exception {
        Properties plaintext = login("agent-a1");
        plaintext.put("security.protocol", "SASL_PLAINTEXT");
        assertThat(AccessProbe.write(bootstrap, plaintext, Topics.USAGE_EVENTS.name())).isEqualTo(Outcome.NO_ANSWER);
        Properties plain = new Properties();
        plain.put("security.protocol", "PLAINTEXT");
        assertThat(AccessProbe.read(bootstrap, plain, Topics.NODE_COMMANDS.name())).isEqualTo(Outcome.NO_ANSWER);
        // the JDK's own trust store does not know the stack's CA: the TLS handshake fails
        Properties untrusting = login("agent-a1");
        untrusting.remove("ssl.truststore.type");
        untrusting.remove("ssl.truststore.location");
        assertThat(AccessProbe.write(bootstrap, untrusting, Topics.USAGE_EVENTS.name()))
                .isEqualTo(Outcome.AUTHENTICATION_FAILED);
    }

    @Test
    void a_client_certificate_from_another_ca_ends_the_handshake() throws Exception {
        // SASL says who a client is, so no client needs a certificate; one that presents a certificate from another
        // CA (a client set up for another stack) is refused in the TLS handshake, before any login
        Path foreign = StackTls.certificate(ROOT, RUN_DIR.resolve("other-stack"), "agent-a1");
        Path own = StackTls.certificate(ROOT, RUN_DIR, "agent-a1");
        byte[] nothingYet = new byte[] {0, 0, 0, 0};
        assertThat(StackTls.exchange(StackTls.presenting(RUN_DIR, foreign), port, nothingYet)).startsWith("refused: ");
        // the stack's own certificate passes the handshake (what the broker makes of four zero bytes is Kafka's)
        assertThat(StackTls.exchange(StackTls.presenting(RUN_DIR, own), port, nothingYet)).doesNotStartWith("refused");
        // and with it, the login decides as before
        long before = endOffsets(Topics.USAGE_EVENTS.name());
        assertThat(AccessProbe.write(bootstrap, withCertificate(login("agent-a1"), own), Topics.USAGE_EVENTS.name()))
                .isEqualTo(Outcome.ALLOWED);
        assertThat(AccessProbe.write(bootstrap, withCertificate(login("agent-a1"), own), Topics.NODE_COMMANDS.name()))
                .isEqualTo(Outcome.NOT_AUTHORIZED);
        assertThat(endOffsets(Topics.USAGE_EVENTS.name())).isGreaterThan(before);
    }

    static Properties withCertificate(Properties props, Path certificate) throws IOException {
        String password = new String(StackTls.password(certificate));
        props.put("ssl.keystore.type", "PKCS12");
        props.put("ssl.keystore.location", certificate.toString());
        props.put("ssl.keystore.password", password);
        props.put("ssl.key.password", password);
        return props;
    }

    @Test
    void an_agent_may_not_read_another_agents_commands_through_its_group() throws Exception {
        Properties props = login("agent-a1");
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "node-agent-a2");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(Topics.NODE_COMMANDS.name()));
            assertThatThrownBy(() -> {
                for (int i = 0; i < 20; i++) {
                    consumer.poll(Duration.ofMillis(500));
                }
            }).isInstanceOf(GroupAuthorizationException.class);
        }
    }

    @Test
    void an_agent_may_write_about_its_own_hosts_only_what_the_readers_accept() throws Exception {
        // agent a1 is enrolled for a1-*, agent a2 for host a2; both may write node.events (the ACLs cannot tell
        // their hosts apart), and what a1 signs about a2's host is refused by every reader, with the reason
        Properties props = login("agent-a1");
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, EnrolmentSigner.class.getName());
        props.put(EnrolmentSigner.CREDENTIAL_CONFIG, AUTH.resolve("agent-a1.enrolment").toString());
        List<String> hosts = List.of("a1-0", "a2", "a1-7");
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(),
                new ByteArraySerializer())) {
            for (String host : hosts) {
                NodeEvent event = new NodeEvent(host, NodeEventType.HEARTBEAT_LOST, Instant.now(), null, null, null,
                        "enrolment check");
                producer.send(EventRecords.record(Topics.NODE_EVENTS, host, event, "/node-agent/" + host))
                        .get(30, TimeUnit.SECONDS);
            }
        }
        Enrolment.Verifier verifier = Enrolment.Verifier.read(AUTH.resolve("enrolment.key"));
        Map<String, String> outcome = new TreeMap<>();
        Properties scheduler = login("scheduler");
        scheduler.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        scheduler.put(ConsumerConfig.GROUP_ID_CONFIG, "scheduler-enrolment-check");
        scheduler.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(scheduler, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(Topics.NODE_EVENTS.name()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (outcome.size() < hosts.size() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    if (!hosts.contains(record.key())) {
                        continue;
                    }
                    try {
                        outcome.put(record.key(), "accepted: " + EventRecords.decode(Topics.NODE_EVENTS, record,
                                Instant.now(), verifier).payload().nodeId());
                    } catch (MalformedEventException e) {
                        outcome.put(record.key(), e.getMessage());
                    }
                }
            }
        }
        assertThat(outcome).containsExactlyInAnyOrderEntriesOf(Map.of(
                "a1-0", "accepted: a1-0",
                "a1-7", "accepted: a1-7",
                "a2", "node.events: agent 'a1' is enrolled for a1-*, not for host 'a2'"));
        // a2's own credential says it may speak for a2, and for nothing of a1's
        assertThat(Enrolment.Credential.read(AUTH.resolve("agent-a2.enrolment")).hosts()).containsExactly("a2");
    }

    /**
     * components/external-kafka: a broker gpucloud does not run, made ready by `gpucloud kafka setup-external` (here
     * this test's broker, with its admin's login): the node agents share one login, which may do what an agent
     * does in any agent's group and nothing more, and the operator is told the Secrets to make.
     */
    @Test
    void a_broker_made_ready_for_the_cluster_gives_the_agents_one_login_that_does_what_an_agent_does() throws Exception {
        // into the folder the other tests' logins are in: a run again keeps the passwords it made
        String said = kafkaShOutput(0, "setup-external", bootstrap, AUTH.resolve("admin.properties").toString(),
                AUTH.toString(), "--namespace", "gpucloud");
        assertThat(said).contains("logins and ACLs for scheduler, billing, metrics, auditor, node-agents")
                .contains("kubectl -n gpucloud create secret generic node-agents --from-file=password="
                        + AUTH.resolve("k8s/node-agents.password"))
                .contains("kubectl -n gpucloud create secret generic gpucloud-kafka-external --from-literal=bootstrap="
                        + bootstrap + " --from-file=ca.crt=");
        assertThat(Files.readString(AUTH.resolve("k8s/node-agents.password")))
                .isEqualTo(Files.readString(AUTH.resolve("node-agents.password")).strip()).doesNotContain("\n");
        Properties shared = login("node-agents");
        for (Topic<?> topic : Topics.all()) {
            for (String name : List.of(topic.name(), topic.deadLetterTopic())) {
                Outcome expected = WRITES.get("agent-a1").contains(name) ? Outcome.ALLOWED : Outcome.NOT_AUTHORIZED;
                assertThat(AccessProbe.write(bootstrap, shared, name)).as("node-agents write " + name).isEqualTo(expected);
            }
        }
        assertThat(consumeAs(shared, "node-agent-gpu-host-7")).as("an agent's group").isNull();
        assertThat(consumeAs(shared, "scheduler-service")).as("the scheduler's group")
                .isInstanceOf(GroupAuthorizationException.class);
        // where the broker's logins are made elsewhere: the ACLs alone, no credential, no file
        Path none = RUN_DIR.resolve("acls-only");
        assertThat(kafkaShOutput(0, "setup-external", bootstrap, AUTH.resolve("admin.properties").toString(),
                none.toString(), "--acls-only")).contains("ACLs set for the users scheduler, billing, metrics, auditor,"
                        + " node-agents").contains("kubectl create secret generic node-agents --from-file=password=<a"
                        + " file holding node-agents's password, no newline>");
        assertThat(none).doesNotExist();
        // the services' logins made before still work: the setup kept their passwords
        assertThat(AccessProbe.write(bootstrap, login("billing"), Topics.AUDIT_EVENTS.name())).isEqualTo(Outcome.ALLOWED);
        // bad input: named, nothing made
        assertThat(kafkaShOutput(2, "setup-external", bootstrap, "/nonexistent/admin.properties", AUTH.toString()))
                .contains("cannot read the admin's client settings /nonexistent/admin.properties");
        assertThat(kafkaShOutput(2, "setup-external", bootstrap, AUTH.resolve("admin.properties").toString(),
                AUTH.toString(), "--replication-factor", "none")).contains("--replication-factor must be a whole number");
        assertThat(kafkaShOutput(1, "setup-external", bootstrap, AUTH.resolve("agent-a1.properties").toString(),
                RUN_DIR.resolve("not-an-admin").toString())).contains("refused or did not answer");
    }

    /** Consumes node.commands in {@code group} as {@code login}: null where the broker let it, else what it threw. */
    static Exception consumeAs(Properties login, String group) {
        Properties props = new Properties();
        props.putAll(login);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(Topics.NODE_COMMANDS.name()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (consumer.assignment().isEmpty() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(500));
            }
            return consumer.assignment().isEmpty() ? new IllegalStateException("no partitions in 20 s") : null;
        } catch (Exception e) {
            return e;
        }
    }

    @Test
    void a_principal_name_that_is_no_agent_id_is_refused_before_anything_is_provisioned() throws Exception {
        assertThat(kafkaShExit("provision", "agent:../a1")).isNotZero();
        assertThat(kafkaShExit("provision", "root")).isNotZero();
        assertThat(Files.exists(AUTH.resolve("agent-...password"))).isFalse();
    }

    static Properties login(String principal) throws IOException {
        return KafkaAccess.clientConfig(AUTH.resolve(principal + ".properties"));
    }

    static long endOffsets(String topic) throws Exception {
        Properties props = KafkaAccess.clientConfig(AUTH.resolve("admin.properties"));
        props.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(props)) {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get(topic).partitions().size();
            Map<TopicPartition, OffsetSpec> specs = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
            for (int p = 0; p < partitions; p++) {
                specs.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            return admin.listOffsets(specs).all().get(30, TimeUnit.SECONDS).values().stream()
                    .mapToLong(info -> info.offset()).sum();
        }
    }

    static void kafkaSh(String... args) throws Exception {
        int exit = kafkaShExit(args);
        if (exit != 0) {
            throw new IllegalStateException("kafka.sh " + String.join(" ", args) + " exited " + exit + ":\n"
                    + Files.readString(RUN_DIR.resolve("kafka-sh.log")));
        }
    }

    static int kafkaShExit(String... args) throws Exception {
        Files.createDirectories(RUN_DIR);
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("deploy/local/kafka.sh").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(RUN_DIR.resolve("kafka-sh.log").toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.put("GPUCLOUD_RUN_DIR", RUN_DIR.toString());
        env.put("KAFKA_PORT", String.valueOf(port));
        env.put("KAFKA_CONTROLLER_PORT", String.valueOf(controllerPort));
        env.put("KAFKA_SECURITY", "sasl");
        Process process = pb.start();
        if (!process.waitFor(3, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("kafka.sh " + String.join(" ", args) + " did not finish in 3 minutes");
        }
        return process.exitValue();
    }

    /** Runs kafka.sh, expecting {@code exit}; what it printed. */
    static String kafkaShOutput(int exit, String... args) throws Exception {
        Path log = RUN_DIR.resolve("kafka-sh.log");
        long from = Files.exists(log) ? Files.size(log) : 0;
        int got = kafkaShExit(args);
        byte[] all = Files.readAllBytes(log);
        String said = new String(all, (int) from, all.length - (int) from, java.nio.charset.StandardCharsets.UTF_8);
        assertThat(got).as("kafka.sh " + String.join(" ", args) + " said:\n" + said).isEqualTo(exit);
        return said;
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
