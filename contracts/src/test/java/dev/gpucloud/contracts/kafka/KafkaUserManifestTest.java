package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.kafka.KafkaAccess.Principal;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.acl.AclBinding;
import org.junit.jupiter.api.Test;

/**
 * deploy/k8s/base/kafka-users.yaml (Strimzi KafkaUser resources) is generated from {@link KafkaAccess#bindings}, so
 * the cluster's ACLs cannot drift from the table the local stack provisions: this test fails when an ACL is in one
 * and not the other, naming it, and when the file differs in any other way from what {@link #render()} writes.
 * Regenerate with {@code ./mvnw -o -pl contracts test -Dtest=KafkaUserManifestTest -Dgpucloud.regenerate=true}.
 */
class KafkaUserManifestTest {

    private static final Path MANIFEST = Path.of("..", "deploy", "k8s", "base", "kafka-users.yaml");

    /** The users of the Kubernetes manifests, and what each is for. */
    private static final Map<Principal, String> USERS = new LinkedHashMap<>();

    // No node agent here: each gets a KafkaUser agent-ID of its own when it enrols (scheduler-service
    // AgentKafkaUsers, from the same table), docs/security.md "Enrolment on Kubernetes".
    static {
        USERS.put(Principal.parse("scheduler"), "scheduler-service (every instance)");
        USERS.put(Principal.parse("billing"), "billing-service (every replica)");
        USERS.put(Principal.parse("metrics"), "metrics-service");
        USERS.put(Principal.parse("auditor"), "`gpucloud audit`, for an operator: no workload here uses it");
    }

    @Test
    void the_strimzi_users_have_exactly_the_acls_of_kafka_access() throws IOException {
        String expected = render();
        if (Boolean.getBoolean("gpucloud.regenerate")) {
            Files.writeString(MANIFEST, expected, StandardCharsets.UTF_8);
        }
        String actual = Files.readString(MANIFEST, StandardCharsets.UTF_8);
        Set<String> inManifest = aclsIn(actual);
        Set<String> inTable = new TreeSet<>();
        for (Principal user : USERS.keySet()) {
            for (AclBinding acl : KafkaAccess.bindings(user)) {
                inTable.add(acl(user.name(), StrimziAcls.type(acl.pattern().resourceType()), acl.pattern().name(),
                        StrimziAcls.pattern(acl.pattern().patternType()), StrimziAcls.operation(acl.entry().operation())));
            }
        }
        Set<String> onlyInManifest = new TreeSet<>(inManifest);
        onlyInManifest.removeAll(inTable);
        Set<String> onlyInTable = new TreeSet<>(inTable);
        onlyInTable.removeAll(inManifest);
        assertThat(onlyInManifest).as("ACLs of %s that KafkaAccess.bindings does not give (regenerate it with "
                + "-Dgpucloud.regenerate=true, or add them to KafkaAccess)", MANIFEST).isEmpty();
        assertThat(onlyInTable).as("ACLs of KafkaAccess.bindings missing from %s (regenerate it with "
                + "-Dgpucloud.regenerate=true)", MANIFEST).isEmpty();
        assertThat(actual).as("regenerate %s with -Dgpucloud.regenerate=true", MANIFEST).isEqualTo(expected);
    }

    @Test
    void every_user_is_strimzi_v1_whose_rules_list_their_operations() {
        // v1 (Strimzi 0.49 and later) requires each ACL rule's `operations` list and has no single `operation`
        String yaml = render();
        assertThat(yaml.lines().filter(l -> l.startsWith("apiVersion:")))
                .isNotEmpty().allMatch(l -> l.equals("apiVersion: kafka.strimzi.io/v1"));
        assertThat(yaml).doesNotContain("operation:");
        assertThat(yaml.lines().filter(l -> l.contains("- resource:")).count())
                .isEqualTo(yaml.lines().filter(l -> l.trim().startsWith("operations: [")).count());
    }

    @Test
    void no_node_agent_login_is_shared_every_agent_gets_its_own_at_enrolment() {
        // the scheduler makes KafkaUser agent-ID per enrolled node (AgentKafkaUsers), from the same table
        assertThat(USERS.keySet()).noneMatch(user -> user.role() == KafkaAccess.Role.AGENT);
        assertThat(StrimziAcls.rules(Principal.parse("agent:gpu-node-7")))
                .filteredOn(rule -> rule.type().equals("group"))
                .containsExactly(new StrimziAcls.Rule("group", "node-agent-gpu-node-7", "literal", List.of("Read")));
    }

    @Test
    void an_acl_added_or_removed_by_hand_is_seen() {
        String rendered = render();
        Set<String> acls = aclsIn(rendered);
        assertThat(acls).hasSize(USERS.keySet().stream().mapToInt(u -> KafkaAccess.bindings(u).size()).sum());
        // billing's rule for usage.events comes first (metrics reads it too, later in the file)
        String rule = """
                      - resource: {type: topic, name: usage.events, patternType: literal}
                        operations: [Read, Describe]
                """;
        String added = rendered.replaceFirst(Pattern.quote(rule), Matcher.quoteReplacement(
                rule.replace("[Read, Describe]", "[Read, Describe, Write]")));
        Set<String> more = new TreeSet<>(aclsIn(added));
        more.removeAll(acls);
        assertThat(more).containsExactly(acl("billing", "topic", "usage.events", "literal", "Write"));
        Set<String> fewer = new TreeSet<>(acls);
        fewer.removeAll(aclsIn(rendered.replaceFirst(Pattern.quote(rule), "")));
        assertThat(fewer).containsExactlyInAnyOrder(acl("billing", "topic", "usage.events", "literal", "Read"),
                acl("billing", "topic", "usage.events", "literal", "Describe"));
    }

    /** Every ACL a manifest written as {@link #render()} writes holds, one string each: user type name pattern op. */
    static Set<String> aclsIn(String yaml) {
        Pattern user = Pattern.compile("(?m)^kind: KafkaUser\\nmetadata:\\n  name: (\\S+)$");
        Pattern rule = Pattern.compile("- resource: \\{type: (\\w+), name: \"?([^\",}]+?)\"?, patternType: (\\w+)}\\n"
                + "\\s+operations: \\[([^\\]]*)]");
        Set<String> acls = new TreeSet<>();
        for (String doc : yaml.split("(?m)^---$")) {
            Matcher u = user.matcher(doc);
            if (!u.find()) {
                continue;
            }
            Matcher r = rule.matcher(doc);
            while (r.find()) {
                for (String op : r.group(4).split(",")) {
                    acls.add(acl(u.group(1), r.group(1), r.group(2), r.group(3), op.strip()));
                }
            }
        }
        return acls;
    }

    static String render() {
        StringBuilder yaml = new StringBuilder();
        yaml.append("# Generated by contracts KafkaUserManifestTest from KafkaAccess.bindings, the one table of who may do what\n")
                .append("# on the broker (docs/security.md, \"Kafka\"); do not edit by hand.\n")
                .append("# Regenerate: ./mvnw -o -pl contracts test -Dtest=KafkaUserManifestTest -Dgpucloud.regenerate=true\n")
                .append("# Strimzi's user operator gives each user a SCRAM-SHA-512 password, in a Secret of the user's name (key\n")
                .append("# `password`), and its ACLs, on the Kafka cluster \"gpucloud\" (label strimzi.io/cluster), whose listener\n")
                .append("# must take scram-sha-512 and whose authorization must be `simple` (base/kustomization.yaml).\n")
                .append("# No node agent's user is here: the scheduler makes KafkaUser agent-ID for each node at its enrolment.\n");
        for (Map.Entry<Principal, String> user : USERS.entrySet()) {
            yaml.append("---\n");
            for (String line : user.getValue().split("\n")) {
                yaml.append("# ").append(line).append('\n');
            }
            yaml.append("apiVersion: ").append(StrimziAcls.API_VERSION).append("\n")
                    .append("kind: KafkaUser\n")
                    .append("metadata:\n")
                    .append("  name: ").append(user.getKey().name()).append('\n')
                    .append("  labels:\n")
                    .append("    strimzi.io/cluster: gpucloud\n")
                    .append("spec:\n")
                    .append("  authentication:\n")
                    .append("    type: scram-sha-512\n")
                    .append("  authorization:\n")
                    .append("    type: simple\n")
                    .append("    acls:\n");
            // one rule per resource, with its operations in the order the table gives them
            for (StrimziAcls.Rule rule : StrimziAcls.rules(user.getKey())) {
                yaml.append("      - resource: {type: ").append(rule.type()).append(", name: ").append(quoted(rule.name()))
                        .append(", patternType: ").append(rule.patternType()).append("}\n")
                        .append("        operations: [").append(String.join(", ", rule.operations())).append("]\n");
            }
        }
        return yaml.toString();
    }

    private static String acl(String user, String type, String name, String pattern, String operation) {
        return user + " " + type + " " + name + " " + pattern + " " + operation;
    }

    private static String quoted(String name) {
        return name.matches("[A-Za-z0-9][A-Za-z0-9._-]*") ? name : "\"" + name + "\"";
    }
}
