package dev.gpucloud.contracts.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EventRecords;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AgentSealTest {

    private static final byte[] KEY = Base64.getDecoder().decode("q7Yc8b1n5m0Jd4u2Xo9WfQ3pLk6sTzRvHgEaNiCyUjM=");
    private static final String VALUE = "hunter2-the-api-key";
    private final Enrolment.Verifier scheduler = new Enrolment.Verifier(KEY);
    private final Enrolment.Credential rackA = Enrolment.Credential.mint(KEY, "rack-a", List.of("a-*"));
    private final Enrolment.Credential rackB = Enrolment.Credential.mint(KEY, "rack-b", List.of("a-*", "b-*"));

    private static NodeCommand start(String nodeId, String allocationId, Map<String, String> secrets) {
        return new NodeCommand("c-" + allocationId, NodeCommandType.START, nodeId, allocationId, "job-1", "acme",
                List.of(0), null, 0, 0, 1, null, List.of("train"), Map.of("MODE", "fast"), null, null, null,
                Instant.parse("2026-12-04T10:00:00Z"), null, 7L, secrets);
    }

    private static NodeCommand start(Map<String, String> secrets) {
        return start("a-0", "job-1-a0-r0", secrets);
    }

    /** What the scheduler does: the seal of the agent that signed the host's records. */
    private NodeCommand sealedFor(Enrolment.Credential agent, NodeCommand start) {
        return scheduler.sealFor(Enrolment.Agent.of(agent)).seal(start);
    }

    @Test
    void the_agent_opens_what_the_scheduler_sealed_for_it() {
        NodeCommand sealed = sealedFor(rackA, start(Map.of("TOKEN", VALUE, "EMPTY", "")));

        assertThat(sealed.secretEnv().get("TOKEN")).startsWith("gpucloud:agent-sealed:v1:rack-a:")
                .doesNotContain(VALUE);
        assertThat(sealed.secretEnv().values()).allMatch(AgentSeal::isSealed);
        assertThat(AgentSeal.open(sealed, rackA.seal()))
                .containsExactlyInAnyOrderEntriesOf(Map.of("TOKEN", VALUE, "EMPTY", ""));
    }

    @Test
    void the_seal_of_the_agent_a_signed_record_names_is_the_one_its_credential_opens() {
        ProducerRecord<String, byte[]> signed = rackA.sign(EventRecords.record(Topics.NODE_EVENTS, "a-3",
                new NodeEvent("a-3", NodeEventType.HEARTBEAT_LOST, Instant.now(), null, null, null, "quiet"),
                CloudEvent.create(Topics.NODE_EVENTS.eventType(), Enrolment.SOURCE_PREFIX + "a-3", Instant.now())));
        Enrolment.Agent agent = Enrolment.Agent.of(signed.headers());

        assertThat(agent).isEqualTo(new Enrolment.Agent("rack-a", "a-*"));
        NodeCommand sealed = scheduler.sealFor(agent).seal(start("a-3", "j-a3", Map.of("TOKEN", VALUE)));
        assertThat(AgentSeal.open(sealed, rackA.seal())).containsEntry("TOKEN", VALUE);
    }

    @Test
    void each_sealing_takes_a_fresh_nonce() {
        NodeCommand start = start(Map.of("TOKEN", VALUE));

        assertThat(sealedFor(rackA, start).secretEnv().get("TOKEN"))
                .isNotEqualTo(sealedFor(rackA, start).secretEnv().get("TOKEN"));
    }

    @Test
    void another_agent_cannot_open_it() {
        NodeCommand sealed = sealedFor(rackA, start(Map.of("TOKEN", VALUE)));

        assertThatThrownBy(() -> AgentSeal.open(sealed, rackB.seal())).isInstanceOf(AgentSeal.Refused.class)
                .hasMessage("secret variable 'TOKEN' is sealed for agent 'rack-a', not for this agent, 'rack-b'");
    }

    @Test
    void another_agent_that_puts_its_own_id_on_it_still_cannot_open_it() {
        String value = sealedFor(rackA, start(Map.of("TOKEN", VALUE))).secretEnv().get("TOKEN");
        String renamed = value.replace(":rack-a:", ":rack-b:");

        assertThatThrownBy(() -> AgentSeal.open(start(Map.of("TOKEN", renamed)), rackB.seal()))
                .isInstanceOf(AgentSeal.Refused.class)
                .hasMessageStartingWith("secret variable 'TOKEN' does not open with the key of agent 'rack-b'");
    }

    @Test
    void the_same_agent_enrolled_again_for_other_hosts_has_another_key() {
        Enrolment.Credential widened = Enrolment.Credential.mint(KEY, "rack-a", List.of("a-*", "c-*"));
        NodeCommand sealed = sealedFor(rackA, start(Map.of("TOKEN", VALUE)));

        assertThatThrownBy(() -> AgentSeal.open(sealed, widened.seal())).isInstanceOf(AgentSeal.Refused.class)
                .hasMessageContaining("does not open with the key of agent 'rack-a'");
    }

    @Test
    void a_key_minted_from_another_enrolment_key_cannot_open_it() {
        byte[] other = KEY.clone();
        other[0] ^= 1;
        NodeCommand sealed = sealedFor(rackA, start(Map.of("TOKEN", VALUE)));
        Enrolment.Credential minted = Enrolment.Credential.mint(other, "rack-a", List.of("a-*"));

        assertThatThrownBy(() -> AgentSeal.open(sealed, minted.seal())).isInstanceOf(AgentSeal.Refused.class)
                .hasMessageContaining("does not open");
    }

    @Test
    void an_altered_value_does_not_open() {
        String value = sealedFor(rackA, start(Map.of("TOKEN", VALUE))).secretEnv().get("TOKEN");
        int at = value.length() - 5;
        String altered = value.substring(0, at) + (value.charAt(at) == 'A' ? 'B' : 'A') + value.substring(at + 1);

        assertThatThrownBy(() -> AgentSeal.open(start(Map.of("TOKEN", altered)), rackA.seal()))
                .isInstanceOf(AgentSeal.Refused.class)
                .hasMessageContaining("secret variable 'TOKEN' does not open").hasMessageContaining("altered");
    }

    static Stream<Arguments> elsewhere() {
        return Stream.of(
                Arguments.of("under another variable's name", start("a-0", "job-1-a0-r0", Map.of()), "OTHER"),
                Arguments.of("in another allocation's START", start("a-0", "job-1-a0-r1", Map.of()), "TOKEN"),
                Arguments.of("in a START for another host", start("a-1", "job-1-a0-r0", Map.of()), "TOKEN"),
                Arguments.of("in another job's START", new NodeCommand("c2", NodeCommandType.START, "a-0",
                        "job-1-a0-r0", "job-2", "acme", List.of(0), null, 0, 0, 1, null, List.of("train"), Map.of(),
                        null, null, null, Instant.now(), null, 7L, Map.of()), "TOKEN"),
                Arguments.of("in another tenant's START", new NodeCommand("c3", NodeCommandType.START, "a-0",
                        "job-1-a0-r0", "job-1", "globex", List.of(0), null, 0, 0, 1, null, List.of("train"),
                        Map.of(), null, null, null, Instant.now(), null, 7L, Map.of()), "TOKEN"));
    }

    @ParameterizedTest(name = "a sealed value copied {0} does not open")
    @MethodSource("elsewhere")
    void a_sealed_value_copied_elsewhere_does_not_open(String where, NodeCommand other, String name) {
        String value = sealedFor(rackA, start(Map.of("TOKEN", VALUE))).secretEnv().get("TOKEN");
        NodeCommand copied = other.withSecretEnv(Map.of(name, value));

        assertThatThrownBy(() -> AgentSeal.open(copied, rackA.seal())).isInstanceOf(AgentSeal.Refused.class)
                .hasMessageStartingWith("secret variable '" + name + "' does not open");
    }

    @ParameterizedTest(name = "''{0}'' is not a sealed value")
    @MethodSource("malformed")
    void a_malformed_sealed_value_is_refused_by_name(String text) {
        assertThatThrownBy(() -> AgentSeal.open(start(Map.of("TOKEN", text)), rackA.seal()))
                .isInstanceOf(AgentSeal.Refused.class)
                .hasMessage("secret variable 'TOKEN' is not a well-formed sealed value"
                        + " ('gpucloud:agent-sealed:v1:<agent id>:<base64url>')");
    }

    static Stream<String> malformed() {
        return Stream.of("gpucloud:agent-sealed:", "gpucloud:agent-sealed:v1:rack-a:",
                "gpucloud:agent-sealed:v1::AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                "gpucloud:agent-sealed:v2:rack-a:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                "gpucloud:agent-sealed:v1:rack-a:not*base64!", "gpucloud:agent-sealed:v1:rack-a:AAAA",
                "gpucloud:agent-sealed:v1:rack-a");
    }

    @Test
    void an_agent_without_a_credential_refuses_a_sealed_value_saying_why() {
        NodeCommand sealed = sealedFor(rackA, start(Map.of("TOKEN", VALUE)));

        assertThatThrownBy(() -> AgentSeal.open(sealed, null)).isInstanceOf(AgentSeal.Refused.class)
                .hasMessage("secret variable 'TOKEN' is sealed for agent 'rack-a', and this agent has no enrolment"
                        + " credential to open it with (GPUCLOUD_ENROLMENT_CREDENTIAL)");
    }

    @Test
    void a_withheld_value_fails_its_start_saying_the_scheduler_knew_no_agent() {
        NodeCommand withheld = AgentSeal.withhold(start(Map.of("TOKEN", VALUE)));

        assertThat(withheld.secretEnv()).containsExactly(Map.entry("TOKEN", AgentSeal.WITHHELD));
        assertThatThrownBy(() -> AgentSeal.open(withheld, rackA.seal())).isInstanceOf(AgentSeal.Refused.class)
                .hasMessageStartingWith("secret variable 'TOKEN' was withheld by the scheduler: it knew no enrolled"
                        + " agent of host a-0");
    }

    @Test
    void clear_values_pass_as_they_are_with_or_without_a_credential() {
        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("TOKEN", VALUE);
        secrets.put("OTHER", "plain");

        assertThat(AgentSeal.open(start(secrets), null)).isEqualTo(secrets);
        assertThat(AgentSeal.open(start(secrets), rackA.seal())).isEqualTo(secrets);
    }

    @Test
    void only_a_start_with_secrets_changes() {
        NodeCommand stop = new NodeCommand("s1", NodeCommandType.STOP, "a-0", "job-1-a0-r0", "job-1", "acme",
                List.of(), null, 0, 0, 0, null, List.of(), Map.of(), null, null, null, Instant.now(), "cancelled");
        NodeCommand bare = start(Map.of());
        AgentSeal seal = scheduler.sealFor(Enrolment.Agent.of(rackA));

        assertThat(seal.seal(stop)).isSameAs(stop);
        assertThat(seal.seal(bare)).isSameAs(bare);
        assertThat(AgentSeal.withhold(bare)).isSameAs(bare);
    }

    @Test
    void what_is_printed_never_holds_a_value_or_a_key() {
        NodeCommand start = start(Map.of("TOKEN", VALUE));
        AgentSeal seal = rackA.seal();

        assertThat(seal.toString()).isEqualTo("AgentSeal[agent=rack-a]");
        assertThat(seal.seal(start).toString()).contains("TOKEN=(secret)").doesNotContain(VALUE, "agent-sealed");
    }
}
