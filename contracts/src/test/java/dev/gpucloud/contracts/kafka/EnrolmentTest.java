package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EnrolmentTest {

    private static final byte[] KEY = Base64.getDecoder().decode("q7Yc8b1n5m0Jd4u2Xo9WfQ3pLk6sTzRvHgEaNiCyUjM=");
    private final Enrolment.Verifier verifier = new Enrolment.Verifier(KEY);
    private final Enrolment.Credential rackA = Enrolment.Credential.mint(KEY, "rack-a", List.of("a-*", "spare-1"));

    @Test
    void a_record_signed_by_the_agent_enrolled_for_its_host_decodes() {
        for (String host : List.of("a-0", "a-gpu.7", "spare-1")) {
            ConsumerRecord<String, byte[]> in = consumed(rackA.sign(nodeEvent(host, host)));

            assertThat(EventRecords.decode(Topics.NODE_EVENTS, in, Instant.now(), verifier).payload().nodeId())
                    .isEqualTo(host);
        }
    }

    @Test
    void an_unsigned_record_of_an_agents_topic_is_refused_naming_the_headers() {
        assertThatThrownBy(() -> EventRecords.decode(Topics.NODE_EVENTS, consumed(nodeEvent("a-0", "a-0")),
                Instant.now(), verifier))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("node.events: not signed by an enrolled agent")
                .hasMessageContaining("gpucloud_mac");
    }

    @Test
    void an_agent_cannot_speak_for_a_host_it_is_not_enrolled_for() {
        ConsumerRecord<String, byte[]> in = consumed(rackA.sign(nodeEvent("b-0", "b-0")));

        assertThatThrownBy(() -> EventRecords.decode(Topics.NODE_EVENTS, in, Instant.now(), verifier))
                .isInstanceOf(MalformedEventException.class)
                .hasMessage("node.events: agent 'rack-a' is enrolled for a-*,spare-1, not for host 'b-0'");
    }

    @Test
    void widening_its_own_hosts_in_the_headers_breaks_the_signature() {
        ConsumerRecord<String, byte[]> in = consumed(rackA.sign(nodeEvent("b-0", "b-0")));
        in.headers().remove(Enrolment.HOSTS_HEADER).add(Enrolment.HOSTS_HEADER, "*".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> EventRecords.decode(Topics.NODE_EVENTS, in, Instant.now(), verifier))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("the signature of agent 'rack-a' does not match");
    }

    @Test
    void a_credential_minted_with_another_key_or_a_changed_value_does_not_verify() {
        byte[] other = KEY.clone();
        other[0] ^= 1;
        Enrolment.Credential forged = Enrolment.Credential.mint(other, "rack-a", List.of("a-*", "spare-1"));
        ConsumerRecord<String, byte[]> byForger = consumed(forged.sign(nodeEvent("a-0", "a-0")));
        ProducerRecord<String, byte[]> genuine = rackA.sign(nodeEvent("a-0", "a-0"));
        byte[] changed = genuine.value().clone();
        changed[changed.length - 2] ^= 1;
        ConsumerRecord<String, byte[]> tampered = new ConsumerRecord<>(genuine.topic(), 0, 0L, genuine.key(), changed);
        genuine.headers().forEach(h -> tampered.headers().add(h));

        for (ConsumerRecord<String, byte[]> in : List.of(byForger, tampered)) {
            assertThatThrownBy(() -> verifier.check(in, "/node-agent/a-0", "a-0"))
                    .isInstanceOf(MalformedEventException.class)
                    .hasMessageContaining("does not match");
        }
    }

    @Test
    void the_source_must_name_the_host_the_payload_is_about() {
        ConsumerRecord<String, byte[]> in = consumed(rackA.sign(nodeEvent("a-0", "b-0")));

        assertThatThrownBy(() -> EventRecords.decode(Topics.NODE_EVENTS, in, Instant.now(), verifier))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("ce_source '/node-agent/b-0' must name the host the event is about, "
                        + "'/node-agent/a-0'");
    }

    @Test
    void a_tombstone_is_about_the_host_its_key_names() {
        ConsumerRecord<String, byte[]> own = consumed(rackA.sign(
                EventRecords.tombstone(Topics.GPU_INVENTORY, "a-3", "/node-agent/a-3")));
        ConsumerRecord<String, byte[]> others = consumed(rackA.sign(
                EventRecords.tombstone(Topics.GPU_INVENTORY, "b-3", "/node-agent/b-3")));

        assertThat(EventRecords.decode(Topics.GPU_INVENTORY, own, Instant.now(), verifier).isTombstone()).isTrue();
        assertThatThrownBy(() -> EventRecords.decode(Topics.GPU_INVENTORY, others, Instant.now(), verifier))
                .hasMessageContaining("not for host 'b-3'");
    }

    @Test
    void records_of_topics_agents_do_not_write_need_no_signature() {
        ProducerRecord<String, byte[]> request = new ProducerRecord<>(Topics.JOB_REQUESTS.name(), "acme", new byte[] {1});
        assertThat(Enrolment.signedByAgents(Topics.JOB_REQUESTS.name())).isFalse();
        assertThat(Enrolment.signedByAgents(Topics.NODE_COMMANDS.name())).isFalse();
        assertThat(Enrolment.signedByAgents(Topics.USAGE_EVENTS.name())).isTrue();

        verifier.check(consumed(request), "/scheduler", "acme"); // passes
    }

    @Test
    void signing_again_replaces_the_old_signature() {
        ProducerRecord<String, byte[]> once = rackA.sign(nodeEvent("a-0", "a-0"));
        ProducerRecord<String, byte[]> twice = rackA.sign(once);

        assertThat(twice.headers().headers(Enrolment.MAC_HEADER)).hasSize(1);
        verifier.check(consumed(twice), "/node-agent/a-0", "a-0");
    }

    @Test
    void host_lists_refuse_what_is_not_a_host_name_or_glob() {
        assertThat(Enrolment.hosts("a-*, b-1")).containsExactly("a-*", "b-1");
        for (String bad : List.of("", "a b", "../etc", "a,", "x;drop table")) {
            assertThatThrownBy(() -> Enrolment.hosts(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be 1-128 letters");
        }
        assertThatThrownBy(() -> Enrolment.hosts("h-1,".repeat(600) + "h-2"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 2048 characters");
        assertThat(Enrolment.covers(List.of("sim-*"), "sim-a100-0")).isTrue();
        assertThat(Enrolment.covers(List.of("sim-*"), "simx-a100-0")).isFalse();
        assertThat(Enrolment.covers(List.of("a.b"), "axb")).isFalse(); // '.' is a dot, not any character
    }

    @Test
    void provisioning_writes_an_owner_only_key_once_and_each_agents_credential(@TempDir Path auth) throws Exception {
        KafkaAccess.enrol(auth, Map.of("rack-a", List.of("a-*")));
        String key = Files.readString(auth.resolve("enrolment.key"));
        KafkaAccess.enrol(auth, Map.of("rack-b", List.of("rack-b")));

        assertThat(Files.readString(auth.resolve("enrolment.key"))).isEqualTo(key);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(auth.resolve("enrolment.key"))))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(auth.resolve("agent-rack-a.enrolment"))))
                .isEqualTo("rw-------");
        Enrolment.Credential a = Enrolment.Credential.read(auth.resolve("agent-rack-a.enrolment"));
        assertThat(a.toString()).isEqualTo("Credential[agent=rack-a, hosts=[a-*]]");
        Enrolment.Verifier fromFile = Enrolment.Verifier.read(auth.resolve("enrolment.key"));
        fromFile.check(consumed(a.sign(nodeEvent("a-9", "a-9"))), "/node-agent/a-9", "a-9");
    }

    @Test
    void the_signer_signs_agents_topics_only_and_passes_everything_through_without_a_credential(@TempDir Path auth)
            throws Exception {
        rackA.write(auth.resolve("cred"));
        EnrolmentSigner signer = new EnrolmentSigner();
        signer.configure(Map.of(EnrolmentSigner.CREDENTIAL_CONFIG, auth.resolve("cred").toString()));
        EnrolmentSigner none = new EnrolmentSigner();
        none.configure(Map.of(EnrolmentSigner.CREDENTIAL_CONFIG, "none"));
        ProducerRecord<String, byte[]> event = nodeEvent("a-0", "a-0");
        ProducerRecord<String, byte[]> other = new ProducerRecord<>("node.commands", "a-0", new byte[] {1});

        verifier.check(consumed(signer.onSend(event)), "/node-agent/a-0", "a-0");
        assertThat(signer.onSend(other)).isSameAs(other);
        assertThat(none.onSend(event)).isSameAs(event);

        EnrolmentSigner broken = new EnrolmentSigner();
        assertThatThrownBy(() -> broken.configure(Map.of(EnrolmentSigner.CREDENTIAL_CONFIG,
                auth.resolve("missing").toString())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot read the enrolment credential");
    }

    @Test
    void the_probes_hand_made_node_event_is_one_the_readers_decode_and_then_refuse_for_its_host() throws Exception {
        CloudEvent event = CloudEvent.create(Topics.NODE_EVENTS.eventType(), "/node-agent/b-0", Instant.now());
        ConsumerRecord<String, byte[]> in = consumed(rackA.sign(EnrolmentProbe.nodeEvent("b-0", event)));

        assertThat(EventRecords.decode(Topics.NODE_EVENTS, in, Instant.now(), null).payload().type())
                .isEqualTo(NodeEventType.HEARTBEAT_LOST);
        assertThatThrownBy(() -> EventRecords.decode(Topics.NODE_EVENTS, in, Instant.now(), verifier))
                .hasMessage("node.events: agent 'rack-a' is enrolled for a-*,spare-1, not for host 'b-0'");
    }

    private static ProducerRecord<String, byte[]> nodeEvent(String nodeId, String sourceHost) {
        NodeEvent event = new NodeEvent(nodeId, NodeEventType.HEARTBEAT_LOST, Instant.now(), null, null, null, "quiet");
        return EventRecords.record(Topics.NODE_EVENTS, nodeId, event,
                CloudEvent.create(Topics.NODE_EVENTS.eventType(), "/node-agent/" + sourceHost, Instant.now()));
    }

    private static ConsumerRecord<String, byte[]> consumed(ProducerRecord<String, byte[]> out) {
        ConsumerRecord<String, byte[]> in = new ConsumerRecord<>(out.topic(), 0, 0L, out.key(), out.value());
        out.headers().forEach(h -> in.headers().add(h));
        return in;
    }
}
