package dev.gpucloud.scheduler.service.enrolment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.kafka.Enrolment;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rule of enrolment on Kubernetes apart from HTTP and tokens (not a @QuarkusTest: the rule is a method of a
 * plain class): which node a verified token's claims name, and the credential for it.
 */
class NodeEnrolmentTest {

    private static final String AGENTS = "system:serviceaccount:gpucloud:node-agent";
    private final NodeEnrolment enrolment = new NodeEnrolment(Enrolment.newKey(), AGENTS);

    private static Map<String, Object> onNode(String name) {
        return Map.of("namespace", "gpucloud", "node", Map.of("name", name, "uid", "1"));
    }

    @Test
    void a_node_name_that_is_a_valid_agent_id_is_the_agents_id() {
        NodeEnrolment.Decision decision = enrolment.decide(AGENTS, onNode("ip-10-0-3-17.ec2.internal"));

        assertThat(decision.status()).isEqualTo(200);
        assertThat(decision.credential().agentId()).isEqualTo("ip-10-0-3-17.ec2.internal");
        assertThat(decision.credential().hosts()).containsExactly("ip-10-0-3-17.ec2.internal");
    }

    @Test
    void a_long_node_name_gets_an_agent_id_of_63_characters_that_another_long_name_does_not_share() {
        String prefix = "gke-training-cluster-a100-highmem-pool-3f9c2e1b-";
        String a = prefix + "node-0001-europe-west4-a.c.project.internal";
        String b = prefix + "node-0002-europe-west4-a.c.project.internal";

        Enrolment.Credential first = enrolment.decide(AGENTS, onNode(a)).credential();
        Enrolment.Credential second = enrolment.decide(AGENTS, onNode(b)).credential();

        assertThat(first.agentId()).hasSize(63).startsWith(a.substring(0, 54)).isNotEqualTo(second.agentId());
        assertThat(first.hosts()).containsExactly(a);
        assertThat(NodeEnrolment.agentId(a)).isEqualTo(first.agentId());
    }

    @Test
    void a_node_name_of_128_characters_is_enrolled_and_one_of_129_is_not() {
        String longest = "n" + "-".repeat(126) + "n";

        assertThat(enrolment.decide(AGENTS, onNode(longest)).status()).isEqualTo(200);
        assertThat(enrolment.decide(AGENTS, onNode(longest + "n")).status()).isEqualTo(400);
    }

    @Test
    void claims_that_are_not_the_expected_shapes_name_no_node() {
        for (Object claim : new Object[] {null, "node", Map.of("node", "gpu-1"), Map.of("node", Map.of("name", 7)),
            Map.of("node", Map.of("name", ""))}) {
            assertThat(enrolment.decide(AGENTS, claim).status()).as(String.valueOf(claim)).isEqualTo(403);
        }
    }

    @Test
    void the_agents_subject_must_be_a_service_accounts() {
        assertThatThrownBy(() -> new NodeEnrolment(Enrolment.newKey(), "node-agent"))
                .hasMessageContaining("system:serviceaccount:NAMESPACE:NAME");
        assertThatThrownBy(() -> new NodeEnrolment(new byte[16], AGENTS)).hasMessageContaining("32 bytes");
    }
}
