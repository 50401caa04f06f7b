package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.kafka.KafkaAccess.Principal;
import dev.gpucloud.contracts.kafka.KafkaAccess.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaAccessTest {

    @Test
    void principals_are_the_services_and_agents_by_id_and_nothing_else() {
        assertThat(Principal.parse("scheduler").role()).isEqualTo(Role.SCHEDULER);
        assertThat(Principal.parse("agent:rack-7.host_1")).isEqualTo(new Principal("agent-rack-7.host_1", Role.AGENT,
                "rack-7.host_1"));
        for (String bad : List.of("admin", "", "agent:", "agent:../x", "node-agent", "agent:node-agents/x", "agent:-x", "agent:a b", "agent:a*",
                "agent:" + "x".repeat(64), "User:scheduler")) {
            assertThatThrownBy(() -> Principal.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'");
        }
        assertThatThrownBy(() -> Principal.parse("agent:a\nb")).hasMessageContaining("a?b");
    }

    @Test
    void an_agent_writes_its_reports_reads_only_commands_in_its_own_group_and_never_writes_commands() {
        List<AclBinding> acls = KafkaAccess.bindings(Principal.parse("agent:a1"));
        assertThat(names(acls, ResourceType.TOPIC, AclOperation.WRITE)).containsExactlyInAnyOrder("gpu.inventory",
                "gpu.telemetry", "node.events", "allocation.events", "usage.events", "job.logs", "node.commands.dlq");
        assertThat(names(acls, ResourceType.TOPIC, AclOperation.READ)).containsExactly("node.commands");
        assertThat(names(acls, ResourceType.GROUP, AclOperation.READ)).containsExactly("node-agent-a1");
        assertThat(acls).allMatch(b -> b.pattern().patternType() == PatternType.LITERAL);
        assertThat(acls).allMatch(b -> b.entry().principal().equals("User:agent-a1"));
    }

    @Test
    void the_agents_shared_login_does_what_one_agent_does_in_any_agents_group_and_nothing_more() {
        Principal shared = Principal.parse(KafkaAccess.SHARED_AGENTS);
        assertThat(shared).isEqualTo(new Principal("node-agents", Role.AGENT, null));
        List<AclBinding> acls = KafkaAccess.bindings(shared);
        List<AclBinding> one = KafkaAccess.bindings(Principal.parse("agent:a1"));
        assertThat(names(acls, ResourceType.TOPIC, AclOperation.WRITE))
                .containsExactlyInAnyOrderElementsOf(names(one, ResourceType.TOPIC, AclOperation.WRITE));
        assertThat(names(acls, ResourceType.TOPIC, AclOperation.READ)).containsExactly("node.commands");
        assertThat(acls.stream().filter(b -> b.pattern().resourceType() == ResourceType.GROUP).toList())
                .singleElement().satisfies(b -> {
                    assertThat(b.pattern().name()).isEqualTo("node-agent-");
                    assertThat(b.pattern().patternType()).isEqualTo(PatternType.PREFIXED);
                    assertThat(b.entry().operation()).isEqualTo(AclOperation.READ);
                });
        assertThat(acls).noneMatch(b -> b.pattern().resourceType() == ResourceType.TOPIC
                && b.pattern().patternType() != PatternType.LITERAL);
        assertThat(acls).allMatch(b -> b.entry().principal().equals("User:node-agents"));
    }

    @Test
    void topics_for_a_replicated_broker_wait_for_all_copies_but_one_and_a_bad_factor_is_named() {
        assertThat(TopicProvisioner.newTopics((short) 3)).allSatisfy(t -> {
            assertThat(t.replicationFactor()).isEqualTo((short) 3);
            assertThat(t.configs()).containsEntry("min.insync.replicas", "2").containsKey("cleanup.policy");
        });
        assertThat(TopicProvisioner.newTopics((short) 1)).allSatisfy(t ->
                assertThat(t.configs()).doesNotContainKey("min.insync.replicas"));
        List<String> args = new java.util.ArrayList<>(List.of("b:9093", "--replication-factor", "3", "admin.props"));
        assertThat(TopicProvisioner.replicationOption(args)).isEqualTo((short) 3);
        assertThat(args).containsExactly("b:9093", "admin.props");
        assertThat(TopicProvisioner.replicationOption(new java.util.ArrayList<>(List.of("b:9093")))).isEqualTo((short) 1);
        for (String bad : List.of("0", "-1", "three", "99999")) {
            assertThatThrownBy(() -> TopicProvisioner.replicationOption(
                    new java.util.ArrayList<>(List.of("--replication-factor", bad)))).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + bad + "'");
        }
        assertThatThrownBy(() -> TopicProvisioner.replicationOption(
                new java.util.ArrayList<>(List.of("--replication-factor")))).hasMessageContaining("needs a number");
    }

    @Test
    void only_the_scheduler_writes_commands_and_job_events_and_no_one_may_use_a_wildcard_topic() {
        for (String spec : List.of("scheduler", "billing", "metrics", "auditor", "agent:x")) {
            List<AclBinding> acls = KafkaAccess.bindings(Principal.parse(spec));
            boolean scheduler = spec.equals("scheduler");
            assertThat(names(acls, ResourceType.TOPIC, AclOperation.WRITE).contains("node.commands")).isEqualTo(scheduler);
            assertThat(names(acls, ResourceType.TOPIC, AclOperation.WRITE).contains("job.events")).isEqualTo(scheduler);
            assertThat(acls).noneMatch(b -> b.pattern().resourceType() == ResourceType.TOPIC
                    && (b.pattern().name().equals("*") || b.pattern().patternType() != PatternType.LITERAL));
            assertThat(acls).noneMatch(b -> b.entry().operation() == AclOperation.ALL
                    || b.entry().operation() == AclOperation.ALTER || b.entry().operation() == AclOperation.CREATE);
        }
        assertThat(names(KafkaAccess.bindings(Principal.parse("billing")), ResourceType.TOPIC, AclOperation.READ))
                .containsExactly("usage.events");
        List<AclBinding> auditor = KafkaAccess.bindings(Principal.parse("auditor"));
        assertThat(names(auditor, ResourceType.TOPIC, AclOperation.READ)).containsExactly("audit.events");
        assertThat(names(auditor, ResourceType.TOPIC, AclOperation.WRITE)).isEmpty();
        assertThat(auditor).noneMatch(b -> b.pattern().resourceType() == ResourceType.GROUP);
    }

    @Test
    void a_password_is_made_once_readable_by_its_owner_only_and_the_login_settings_come_from_kafka_keys(
            @TempDir Path dir) throws Exception {
        Principal billing = Principal.parse("billing");
        String first = KafkaAccess.password(dir, billing);
        assertThat(first).hasSize(32).matches("[A-Za-z0-9]+");
        assertThat(KafkaAccess.password(dir, billing)).isEqualTo(first);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("billing.password"))))
                .isEqualTo("rw-------");
        Map<String, String> config = Map.of("kafka.security.protocol", "SASL_PLAINTEXT",
                "kafka.sasl.mechanism", "SCRAM-SHA-512", "kafka.bootstrap.servers", "elsewhere:1");
        assertThat(KafkaAccess.loginSettings(key -> Optional.ofNullable(config.get(key))))
                .containsOnlyKeys("security.protocol", "sasl.mechanism");
        java.util.Properties transport = new java.util.Properties();
        transport.put("security.protocol", "SASL_SSL");
        transport.put("ssl.truststore.location", "/run/tls/ca.pem");
        transport.put("sasl.jaas.config", "the admin's");
        assertThat(KafkaAccess.scramClient("billing", "pw", transport))
                .containsEntry("security.protocol", "SASL_SSL").containsEntry("ssl.truststore.location", "/run/tls/ca.pem")
                .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                .hasEntrySatisfying("sasl.jaas.config", jaas -> assertThat((String) jaas).contains("username=\"billing\""));
    }

    private static List<String> names(List<AclBinding> acls, ResourceType type, AclOperation operation) {
        return acls.stream().filter(b -> b.pattern().resourceType() == type && b.entry().operation() == operation)
                .map(b -> b.pattern().name()).toList();
    }
}
