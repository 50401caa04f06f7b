package dev.gpucloud.scheduler.service.enrolment;

import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.limits.Check;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Which credential a node agent on Kubernetes gets (docs/security.md, "Enrolment on Kubernetes"): the claims of its
 * pod's projected service account token, already verified against the cluster's issuer, name the service account
 * and the node the pod was scheduled to; the agent is enrolled for that node alone. The rule, apart from HTTP:
 * a decision is a credential or a refusal with its status and a message for the caller.
 */
public final class NodeEnrolment {

    /** Where Kubernetes (1.30 and later) puts the node of a pod-bound token: {@code kubernetes.io.node.name}. */
    static final String CLAIM = "kubernetes.io";
    /**
     * A node name that is also a host an agent may be enrolled for: an RFC 1123 subdomain (what Kubernetes accepts
     * as a node's name), within the 128 characters of a host in a credential. Never a glob: {@code *} would enrol
     * the node for every host.
     */
    private static final Pattern NODE_NAME = Pattern.compile(
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final int MAX_NODE_NAME = 128;
    /** The longest agent id a Kafka login allows (KafkaAccess: 1-63 characters). */
    private static final int MAX_AGENT_ID = 63;

    private final byte[] enrolmentKey;
    private final String subject;

    /** Mints with {@code enrolmentKey} for tokens of {@code subject} ({@code system:serviceaccount:NS:NAME}). */
    public NodeEnrolment(byte[] enrolmentKey, String subject) {
        if (enrolmentKey.length < 32) {
            throw new IllegalArgumentException("an enrolment key has at least 32 bytes, this one " + enrolmentKey.length);
        }
        if (!subject.startsWith("system:serviceaccount:") || subject.split(":", -1).length != 4) {
            throw new IllegalArgumentException("the node agents' subject must be system:serviceaccount:NAMESPACE:NAME,"
                    + " is '" + subject + "'");
        }
        this.enrolmentKey = enrolmentKey.clone();
        this.subject = subject;
    }

    /** What a caller is answered: a credential (status 200) or a refusal. */
    public record Decision(int status, String message, Enrolment.Credential credential, String node) {

        static Decision refuse(int status, String message, String node) {
            return new Decision(status, message, null, node);
        }
    }

    /** The node of a verified token's claims, and the credential for it; or why there is none. */
    public Decision decide(String tokenSubject, Object kubernetesClaim) {
        if (!subject.equals(tokenSubject)) {
            return Decision.refuse(403, "the token is for '" + Check.clip(tokenSubject) + "', not for the node agents' "
                    + "service account '" + subject + "'", null);
        }
        Object node = kubernetesClaim instanceof Map<?, ?> k ? k.get("node") : null;
        Object name = node instanceof Map<?, ?> n ? n.get("name") : null;
        if (!(name instanceof String nodeName) || nodeName.isEmpty()) {
            return Decision.refuse(403, "the token names no node (claim kubernetes.io.node.name): send the token the"
                    + " kubelet projects into the agent's pod (a serviceAccountToken volume, Kubernetes 1.30 or later)",
                    null);
        }
        if (nodeName.length() > MAX_NODE_NAME || !NODE_NAME.matcher(nodeName).matches()) {
            return Decision.refuse(400, "the token's node name '" + Check.clip(nodeName) + "' is not a host name an agent"
                    + " can be enrolled for (lower-case letters, digits, '-' and '.', at most " + MAX_NODE_NAME
                    + " characters)", null);
        }
        String agentId = agentId(nodeName);
        return new Decision(200, "agent " + agentId + " enrolled for host " + nodeName,
                Enrolment.Credential.mint(enrolmentKey, agentId, List.of(nodeName)), nodeName);
    }

    /**
     * The agent id of a node: its name where that is a valid agent id (63 characters at most), else its first 54
     * characters and 8 hex digits of its SHA-256, so that two long names with one beginning stay two agents.
     */
    static String agentId(String nodeName) {
        if (nodeName.length() <= MAX_AGENT_ID) {
            return nodeName;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(nodeName.getBytes(StandardCharsets.US_ASCII));
            return nodeName.substring(0, MAX_AGENT_ID - 9) + "-" + HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }
}
