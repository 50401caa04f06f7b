package dev.gpucloud.scheduler.service.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.secrets.AgentSeal;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.scheduler.service.config.EnrolmentKey;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the scheduler writes to its outbox for a START with secrets: sealed for the host's agent where an enrolment
 * key is configured, withheld where that agent is not known, clear without a key. Not a @QuarkusTest: the rule is
 * the class's, called directly.
 */
class HostAgentsTest {

    private static final String SECRET = "hunter2-the-api-key";

    @TempDir
    Path dir;

    private byte[] enrolmentKey;
    private HostAgents agents;
    private Enrolment.Credential rackA;

    @BeforeEach
    void keyed() throws IOException {
        Path file = dir.resolve("enrolment.key");
        enrolmentKey = Enrolment.enrolmentKey(file);
        agents = new HostAgents(new EnrolmentKey(Optional.of(file.toString())));
        rackA = Enrolment.Credential.mint(enrolmentKey, "rack-a", List.of("a-*"));
    }

    private static NodeCommand start(String nodeId) {
        return new NodeCommand("c1", NodeCommandType.START, nodeId, "j1-r0", "j1", "acme", List.of(0), null, 0, 0, 1,
                null, List.of("train"), Map.of(), null, null, null, Instant.now(), null, 3L,
                Map.of("WANDB_API_KEY", SECRET));
    }

    @Test
    void a_start_for_a_host_whose_agent_signed_its_inventory_is_sealed_for_that_agent() {
        agents.heard("a-0", Enrolment.Agent.of(rackA));

        NodeCommand sealed = agents.sealed(start("a-0"));

        assertThat(sealed.secretEnv().get("WANDB_API_KEY")).startsWith("gpucloud:agent-sealed:v1:rack-a:")
                .doesNotContain(SECRET);
        assertThat(AgentSeal.open(sealed, rackA.seal())).containsExactly(Map.entry("WANDB_API_KEY", SECRET));
    }

    @Test
    void a_host_enrolled_anew_gets_its_secrets_sealed_for_the_new_enrolment() {
        Enrolment.Credential widened = Enrolment.Credential.mint(enrolmentKey, "rack-a", List.of("a-*", "b-*"));
        agents.heard("a-0", Enrolment.Agent.of(rackA));
        agents.heard("a-0", Enrolment.Agent.of(widened));

        NodeCommand sealed = agents.sealed(start("a-0"));

        assertThat(AgentSeal.open(sealed, widened.seal())).containsEntry("WANDB_API_KEY", SECRET);
        assertThatThrownBy(() -> AgentSeal.open(sealed, rackA.seal())).isInstanceOf(AgentSeal.Refused.class);
    }

    @Test
    void a_start_for_a_host_with_no_known_agent_is_withheld_never_clear() {
        NodeCommand unknown = agents.sealed(start("a-0"));

        assertThat(unknown.secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", AgentSeal.WITHHELD));
        assertThatThrownBy(() -> AgentSeal.open(unknown, rackA.seal())).isInstanceOf(AgentSeal.Refused.class)
                .hasMessageContaining("'WANDB_API_KEY' was withheld by the scheduler");
    }

    @Test
    void a_host_that_left_has_no_agent_to_seal_for() {
        agents.heard("a-0", Enrolment.Agent.of(rackA));
        agents.left("a-0");

        assertThat(agents.sealed(start("a-0")).secretEnv()).containsEntry("WANDB_API_KEY", AgentSeal.WITHHELD);
    }

    @Test
    void without_an_enrolment_key_secrets_go_clear_as_on_a_broker_without_logins() {
        HostAgents unkeyed = new HostAgents(new EnrolmentKey(Optional.empty()));
        unkeyed.heard("a-0", Enrolment.Agent.of(rackA));

        assertThat(unkeyed.seals()).isFalse();
        assertThat(unkeyed.sealed(start("a-0")).secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", SECRET));
    }

    @Test
    void commands_without_secrets_pass_as_they_are() {
        NodeCommand stop = new NodeCommand("c2", NodeCommandType.STOP, "a-0", "j1-r0", "j1", "acme", List.of(), null,
                0, 0, 0, null, List.of(), Map.of(), null, null, null, Instant.now(), "cancelled");

        assertThat(agents.sealed(stop)).isSameAs(stop);
    }

    @Test
    void an_unreadable_key_file_stops_the_service_from_starting() {
        assertThatThrownBy(() -> new EnrolmentKey(Optional.of(dir.resolve("missing.key").toString())))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot read the enrolment key");
    }
}
