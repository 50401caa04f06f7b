package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.kafka.KafkaAccess.Principal;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
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

    static {
        USERS.put(Principal.parse("scheduler"), "scheduler-service (every instance)");
        USERS.put(Principal.parse("billing"), "billing-service (every replica)");
        USERS.put(Principal.parse("metrics"), "metrics-service");
        USERS.put(Principal.parse("auditor"), "`gpucloud audit`, for an operator: no workload here uses it");
        USERS.put(Principal.everyAgent(), """
                every node agent of the DaemonSet: ONE login for all of them. A DaemonSet gives each of its pods the same
                Secret, so its agents cannot have a principal each, as the local stack's do (agent-ID, whose only group is
                node-agent-ID): any agent may write any host's reports and use any agent's group (node-agent-*). Per-host
                principals need per-node credentials, a controller that makes a KafkaUser for each node or Secrets
                provisioned per node ahead of time, which these manifests do not do.""");
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
                inTable.add(acl(user.name(), type(acl.pattern().resourceType()), acl.pattern().name(),
                        pattern(acl.pattern().patternType()), operation(acl.entry().operation())));
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
    void the_agents_shared_login_differs_from_one_agents_only_in_its_groups() {
        List<AclBinding> one = KafkaAccess.bindings(Principal.parse("agent:a1"));
        List<AclBinding> every = KafkaAccess.bindings(Principal.everyAgent());
        assertThat(topics(every)).isEqualTo(topics(one));
        assertThat(every).filteredOn(b -> b.pattern().resourceType() == ResourceType.GROUP)
                .extracting(AclBinding::pattern)
                .containsExactly(new ResourcePattern(ResourceType.GROUP, "node-agent-", PatternType.PREFIXED));
        assertThat(every).allMatch(b -> b.entry().principal().equals("User:node-agent"));
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
                .append("# must take scram-sha-512 and whose authorization must be `simple` (base/kustomization.yaml).\n");
        for (Map.Entry<Principal, String> user : USERS.entrySet()) {
            yaml.append("---\n");
            for (String line : user.getValue().split("\n")) {
                yaml.append("# ").append(line).append('\n');
            }
            yaml.append("apiVersion: kafka.strimzi.io/v1beta2\n")
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
            Map<ResourcePattern, List<String>> rules = new LinkedHashMap<>();
            for (AclBinding acl : KafkaAccess.bindings(user.getKey())) {
                rules.computeIfAbsent(acl.pattern(), p -> new ArrayList<>()).add(operation(acl.entry().operation()));
            }
            rules.forEach((resource, operations) -> yaml.append("      - resource: {type: ")
                    .append(type(resource.resourceType())).append(", name: ").append(quoted(resource.name()))
                    .append(", patternType: ").append(pattern(resource.patternType())).append("}\n")
                    .append("        operations: [").append(String.join(", ", operations)).append("]\n"));
        }
        return yaml.toString();
    }

    private static Set<String> topics(List<AclBinding> acls) {
        Set<String> topics = new TreeSet<>();
        acls.stream().filter(b -> b.pattern().resourceType() == ResourceType.TOPIC)
                .forEach(b -> topics.add(b.pattern().name() + " " + b.entry().operation()));
        return topics;
    }

    private static String acl(String user, String type, String name, String pattern, String operation) {
        return user + " " + type + " " + name + " " + pattern + " " + operation;
    }

    private static String quoted(String name) {
        return name.matches("[A-Za-z0-9][A-Za-z0-9._-]*") ? name : "\"" + name + "\"";
    }

    /** Strimzi's names (AclRule's resource type, pattern type and operations). */
    private static String type(ResourceType type) {
        return switch (type) {
            case TOPIC -> "topic";
            case GROUP -> "group";
            default -> throw new IllegalArgumentException("no Strimzi resource type for " + type);
        };
    }

    private static String pattern(PatternType pattern) {
        return switch (pattern) {
            case LITERAL -> "literal";
            case PREFIXED -> "prefix";
            default -> throw new IllegalArgumentException("no Strimzi pattern type for " + pattern);
        };
    }

    private static String operation(AclOperation operation) {
        return switch (operation) {
            case READ -> "Read";
            case WRITE -> "Write";
            case DESCRIBE -> "Describe";
            default -> throw new IllegalArgumentException("no Strimzi operation for " + operation);
        };
    }
}
