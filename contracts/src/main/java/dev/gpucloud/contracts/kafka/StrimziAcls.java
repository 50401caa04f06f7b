package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.kafka.KafkaAccess.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * {@link KafkaAccess#bindings} in the words of a Strimzi {@code KafkaUser} ({@code spec.authorization.acls}), so that
 * the generated deploy/k8s/base/kafka-users.yaml and the KafkaUser the scheduler makes for each enrolled agent on
 * Kubernetes carry the very ACLs the local broker gets: one table, translated here, never copied.
 */
public final class StrimziAcls {

    /**
     * The Strimzi API version of every KafkaUser and KafkaTopic gpucloud writes: v1 (Strimzi 0.49 and later), whose
     * ACL rules take a list of {@code operations} only (v1beta2's single {@code operation} is gone).
     */
    public static final String API_VERSION = "kafka.strimzi.io/v1";

    private StrimziAcls() {
    }

    /** One rule of a KafkaUser: a resource ({@code topic} or {@code group}), its name and pattern, its operations. */
    public record Rule(String type, String name, String patternType, List<String> operations) {
        public Rule {
            operations = List.copyOf(operations);
        }
    }

    /** The principal's ACLs as Strimzi rules, one per resource, with operations in the order the table gives them. */
    public static List<Rule> rules(Principal principal) {
        Map<ResourcePattern, List<String>> byResource = new LinkedHashMap<>();
        for (AclBinding acl : KafkaAccess.bindings(principal)) {
            byResource.computeIfAbsent(acl.pattern(), p -> new ArrayList<>()).add(operation(acl.entry().operation()));
        }
        List<Rule> rules = new ArrayList<>();
        byResource.forEach((resource, operations) -> rules.add(new Rule(type(resource.resourceType()),
                resource.name(), pattern(resource.patternType()), operations)));
        return List.copyOf(rules);
    }

    /** Strimzi's name of a resource type (AclRule's {@code resource.type}). */
    public static String type(ResourceType type) {
        return switch (type) {
            case TOPIC -> "topic";
            case GROUP -> "group";
            default -> throw new IllegalArgumentException("no Strimzi resource type for " + type);
        };
    }

    /** Strimzi's name of a pattern type ({@code literal} or {@code prefix}). */
    public static String pattern(PatternType pattern) {
        return switch (pattern) {
            case LITERAL -> "literal";
            case PREFIXED -> "prefix";
            default -> throw new IllegalArgumentException("no Strimzi pattern type for " + pattern);
        };
    }

    /** Strimzi's name of an operation. */
    public static String operation(AclOperation operation) {
        return switch (operation) {
            case READ -> "Read";
            case WRITE -> "Write";
            case DESCRIBE -> "Describe";
            default -> throw new IllegalArgumentException("no Strimzi operation for " + operation);
        };
    }
}
