package dev.gpucloud.contracts.secrets;

import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.limits.Check;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals the secret variables of a START for the one node agent that runs its worker (docs/security.md, "Secret job
 * variables"), so that the scheduler's outbox, the broker's copy of {@code node.commands} and every other agent
 * hold them encrypted. The key is the agent's secrets key: an HMAC-SHA256, with its own label, of the agent's
 * enrolment key ({@code contracts.kafka.Enrolment}), which the scheduler derives from the stack's enrolment key,
 * the agent holds in its credential, and nobody else can work out. Each value is encrypted on its own with
 * AES-256-GCM and a fresh 12-byte nonce; the associated data is the agent, the host, the tenant, the job, the
 * allocation and the variable's name, so a sealed value copied into another START, or under another name, does not
 * open. A sealed value reads {@code gpucloud:agent-sealed:v1:<agent id>:<base64url(nonce|ciphertext)>}.
 *
 * <p>A value without the prefix is clear: a scheduler without an enrolment key sends them so (tests, a broker
 * without logins), and an agent takes them as they are. A value the agent cannot open fails its START, with a reason
 * that names the variable and never the value ({@link Refused}). Plain Java (the JDK's crypto only), so the node
 * agent's runner can use it.
 */
public final class AgentSeal {

    /** How every value meant for one agent alone begins; a submitted secret may not ({@code JobSpec}). */
    public static final String PREFIX = dev.gpucloud.contracts.events.JobSpec.AGENT_SEALED_PREFIX;
    /**
     * What the scheduler sends instead of a secret value it has no agent to seal for (a host whose enrolled agent it
     * does not know, with a key configured): the agent fails the START, saying why, and no value left the scheduler.
     */
    public static final String WITHHELD = PREFIX + "withheld";

    private static final String V1 = PREFIX + "v1:";
    private static final byte[] LABEL = "gpucloud secrets v1".getBytes(StandardCharsets.US_ASCII);
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String agentId;
    private final SecretKeySpec key;

    private AgentSeal(String agentId, SecretKeySpec key) {
        this.agentId = agentId;
        this.key = key;
    }

    /**
     * The seal of agent {@code agentId} whose enrolment key is {@code agentKey} ({@code Enrolment.agentKey}): its
     * secrets key, derived from it. The scheduler gets it through {@code Enrolment.Verifier.sealFor}, an agent
     * through {@code Enrolment.Credential.seal}.
     */
    public static AgentSeal fromAgentKey(String agentId, byte[] agentKey) {
        try {
            // a key of its own rather than the signing key: one key, one purpose
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(agentKey, "HmacSHA256"));
            return new AgentSeal(agentId, new SecretKeySpec(mac.doFinal(LABEL), "AES"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** The agent this seal is for. */
    public String agentId() {
        return agentId;
    }

    /** Whether {@code value} is meant for one agent alone (sealed or withheld), rather than clear. */
    public static boolean isSealed(String value) {
        return value != null && value.startsWith(PREFIX);
    }

    /** {@code start} with each of its secret values sealed for this agent; any other command as it is. */
    public NodeCommand seal(NodeCommand start) {
        if (start.type() != NodeCommandType.START || start.secretEnv().isEmpty()) {
            return start;
        }
        Map<String, String> sealed = new LinkedHashMap<>();
        start.secretEnv().forEach((name, value) -> sealed.put(name, seal(start, name, value)));
        return start.withSecretEnv(sealed);
    }

    /** {@code start} with each of its secret values replaced by {@link #WITHHELD}; any other command as it is. */
    public static NodeCommand withhold(NodeCommand start) {
        if (start.type() != NodeCommandType.START || start.secretEnv().isEmpty()) {
            return start;
        }
        Map<String, String> withheld = new LinkedHashMap<>();
        start.secretEnv().keySet().forEach(name -> withheld.put(name, WITHHELD));
        return start.withSecretEnv(withheld);
    }

    /** One value of {@code start}, sealed for this agent under {@code name}. */
    String seal(NodeCommand start, String name, String value) {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(associatedData(agentId, start, name));
            byte[] sealed = cipher.doFinal(value.getBytes(StandardCharsets.UTF_8));
            byte[] out = ByteBuffer.allocate(nonce.length + sealed.length).put(nonce).put(sealed).array();
            return V1 + agentId + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is part of every Java runtime", e);
        }
    }

    /**
     * The secret variables of {@code start} in the clear: each sealed value opened with {@code own} (this agent's
     * seal; null for an agent without a credential), each clear one as it is.
     *
     * @throws Refused naming the first variable that does not open, and why; never a value
     */
    public static Map<String, String> open(NodeCommand start, AgentSeal own) {
        Map<String, String> clear = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : start.secretEnv().entrySet()) {
            String value = e.getValue();
            clear.put(e.getKey(), isSealed(value) ? open(start, e.getKey(), value, own) : value);
        }
        return clear;
    }

    private static String open(NodeCommand start, String name, String text, AgentSeal own) {
        String variable = "secret variable '" + Check.clip(name) + "'";
        if (text.equals(WITHHELD)) {
            throw new Refused(variable + " was withheld by the scheduler: it knew no enrolled agent of host "
                    + start.nodeId() + " to seal it for (docs/security.md, \"Secret job variables\")");
        }
        int colon = text.lastIndexOf(':');
        String sealedFor = text.startsWith(V1) && colon > V1.length() ? text.substring(V1.length(), colon) : null;
        byte[] bytes = null;
        if (sealedFor != null) {
            try {
                bytes = Base64.getUrlDecoder().decode(text.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                bytes = null;
            }
        }
        if (bytes == null || bytes.length < NONCE_BYTES + TAG_BITS / 8) {
            throw new Refused(variable + " is not a well-formed sealed value ('" + V1 + "<agent id>:<base64url>')");
        }
        if (own == null) {
            throw new Refused(variable + " is sealed for agent '" + Check.clip(sealedFor) + "', and this agent has no"
                    + " enrolment credential to open it with (GPUCLOUD_ENROLMENT_CREDENTIAL)");
        }
        if (!sealedFor.equals(own.agentId)) {
            throw new Refused(variable + " is sealed for agent '" + Check.clip(sealedFor) + "', not for this agent, '"
                    + own.agentId + "'");
        }
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, own.key, new GCMParameterSpec(TAG_BITS, bytes, 0, NONCE_BYTES));
            cipher.updateAAD(associatedData(own.agentId, start, name));
            return new String(cipher.doFinal(bytes, NONCE_BYTES, bytes.length - NONCE_BYTES), StandardCharsets.UTF_8);
        } catch (AEADBadTagException e) {
            throw new Refused(variable + " does not open with the key of agent '" + own.agentId + "': sealed for"
                    + " another enrolment of it, for another START or variable, or altered on the way");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is part of every Java runtime", e);
        }
    }

    /** Length-prefixed, so that no two different STARTs and names read the same. */
    private static byte[] associatedData(String agentId, NodeCommand start, String name) {
        String[] fields = {agentId, start.nodeId(), start.tenant(), start.jobId(), start.allocationId(), name};
        int size = 0;
        byte[][] bytes = new byte[fields.length][];
        for (int i = 0; i < fields.length; i++) {
            bytes[i] = fields[i].getBytes(StandardCharsets.UTF_8);
            size += 4 + bytes[i].length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (byte[] field : bytes) {
            out.putInt(field.length).put(field);
        }
        return out.array();
    }

    /** A START's secret value that this agent cannot open; the message names the variable, never the value. */
    public static final class Refused extends RuntimeException {

        Refused(String message) {
            super(message);
        }
    }

    @Override
    public String toString() {
        return "AgentSeal[agent=" + agentId + "]"; // never the key
    }
}
