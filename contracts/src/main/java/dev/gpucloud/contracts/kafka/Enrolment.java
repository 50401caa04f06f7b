package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobLogChunk;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.Require;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.secrets.AgentSeal;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Which hosts a node agent may speak for (docs/security.md, "Enrolment"). The broker's ACLs let any agent
 * write the five topics agents write; they cannot tell one agent's hosts from another's. So each agent is
 * enrolled for a set of hosts when it is provisioned, and signs what it sends:
 *
 * <ul>
 *   <li>The stack keeps one enrolment key (32 random bytes). Only the provisioner and the services that read
 *       agents' records hold it.</li>
 *   <li>An agent's credential is its id, the hosts it is enrolled for (names, or globs where {@code *} stands for
 *       any run of letters, digits, '.', '_' and '-'), and a key derived from the enrolment key, the id and the
 *       hosts. Knowing it says nothing about the enrolment key or about another agent's key.</li>
 *   <li>Each record an agent writes carries its id, its hosts and an HMAC-SHA256, under its key, of the topic,
 *       the key, the CloudEvents attributes and the value ({@link Signer}).</li>
 *   <li>A reader derives the key again from the id and hosts in the record, checks the MAC, and checks that the
 *       host the record is about (its {@code ce_source} and the payload's {@code nodeId}) is one of the hosts
 *       ({@link Verifier}). Anything else is a {@link MalformedEventException}, which the consumers
 *       dead-letter with the reason.</li>
 * </ul>
 *
 * <p>A compromised agent can still lie about its own hosts; it can no longer speak for another's. HMAC rather
 * than signatures, because every telemetry record is checked and a check costs microseconds where an Ed25519
 * verification in JDK 17 costs most of a millisecond (docs/benchmarks.md, "Enrolment"); the price is that the
 * readers hold the enrolment key.
 */
public final class Enrolment {

    /** The agent id a record was signed by. */
    public static final String AGENT_HEADER = "gpucloud_agent";
    /** The hosts that agent is enrolled for, comma-separated, as its credential lists them. */
    public static final String HOSTS_HEADER = "gpucloud_hosts";
    /** Base64 of the HMAC-SHA256 of the record under the agent's key. */
    public static final String MAC_HEADER = "gpucloud_mac";
    /** The environment variable that names the enrolment key's file in the services that read agents' records. */
    public static final String KEY_ENV = "GPUCLOUD_ENROLMENT_KEY";
    /** The environment variable that names an agent's credential file. */
    public static final String CREDENTIAL_ENV = "GPUCLOUD_ENROLMENT_CREDENTIAL";
    /** The source prefix of agents' records ({@code /node-agent/NODE_ID}). */
    public static final String SOURCE_PREFIX = "/node-agent/";

    /** The longest host list an agent may be enrolled for, in characters. */
    static final int MAX_HOST_LIST = 2048;
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] DERIVATION_LABEL = "gpucloud enrolment v1".getBytes(StandardCharsets.US_ASCII);
    private static final Pattern HOST_GLOB = Pattern.compile("[A-Za-z0-9*][A-Za-z0-9._*-]{0,127}");
    private static final Set<String> AGENT_TOPICS = KafkaAccess.Role.AGENT.writes().stream().map(Topic::name)
            .collect(Collectors.toUnmodifiableSet());

    private Enrolment() {
    }

    /** Whether records of {@code topic} come from agents, and so must be signed by one enrolled for their host. */
    public static boolean signedByAgents(String topic) {
        return AGENT_TOPICS.contains(topic);
    }

    /** Parses a comma-separated host list; each entry is a host name or a glob. */
    public static List<String> hosts(String spec) {
        if (spec.length() > MAX_HOST_LIST) {
            // a record carries its agent's list: a long one would be a pattern to compile that no enrolment needs
            throw new IllegalArgumentException("a host list has at most " + MAX_HOST_LIST + " characters, this one "
                    + spec.length() + " (enrol an agent for globs such as rack7-*)");
        }
        List<String> hosts = new ArrayList<>();
        for (String entry : spec.split(",", -1)) {
            String host = entry.strip();
            if (!HOST_GLOB.matcher(host).matches()) {
                throw new IllegalArgumentException("host '" + clip(host) + "' must be 1-128 letters, digits, '.', '_', "
                        + "'-' or '*', starting with a letter, digit or '*'");
            }
            hosts.add(host);
        }
        return List.copyOf(hosts);
    }

    /** Whether {@code nodeId} is one of {@code hosts} (names or globs). */
    public static boolean covers(List<String> hosts, String nodeId) {
        return pattern(hosts).matcher(nodeId).matches();
    }

    /** One pattern for a host list: each name as it is, each glob's {@code *} as any run of host-name characters. */
    private static Pattern pattern(List<String> hosts) {
        StringBuilder regex = new StringBuilder();
        for (String host : hosts) {
            if (regex.length() > 0) {
                regex.append('|');
            }
            StringBuilder one = new StringBuilder();
            for (String part : host.split("\\*", -1)) {
                if (one.length() > 0) {
                    one.append("[A-Za-z0-9._-]*");
                }
                one.append(Pattern.quote(part));
            }
            regex.append("(?:").append(one).append(')');
        }
        return Pattern.compile(regex.toString());
    }

    /** A new random enrolment key. */
    public static byte[] newKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return key;
    }

    /** The key of agent {@code agentId} enrolled for {@code hosts}, derived from the enrolment key. */
    public static byte[] agentKey(byte[] enrolmentKey, String agentId, List<String> hosts) {
        Mac mac = mac(enrolmentKey);
        mac.update(DERIVATION_LABEL);
        field(mac, agentId.getBytes(StandardCharsets.UTF_8));
        field(mac, String.join(",", hosts).getBytes(StandardCharsets.UTF_8));
        return mac.doFinal();
    }

    /** An agent's credential: its id, the hosts it may speak for, and its key. */
    public record Credential(String agentId, List<String> hosts, byte[] key) {

        public Credential {
            KafkaAccess.Principal.parse("agent:" + agentId); // the same rule for ids as the broker's logins
            hosts = List.copyOf(hosts);
            if (hosts.isEmpty()) {
                throw new IllegalArgumentException("agent " + agentId + " must be enrolled for at least one host");
            }
            key = key.clone();
        }

        /** Mints the credential of {@code agentId} for {@code hosts}. */
        public static Credential mint(byte[] enrolmentKey, String agentId, List<String> hosts) {
            return new Credential(agentId, hosts, agentKey(enrolmentKey, agentId, hosts));
        }

        /** Reads a credential file ({@code agent}, {@code hosts}, {@code key} in base64). */
        public static Credential read(Path file) throws IOException {
            try {
                return parse(Files.readString(file, StandardCharsets.ISO_8859_1));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + ": " + e.getMessage(), e);
            }
        }

        /**
         * Parses a credential in its file's form ({@link #fileText}), as the scheduler's enrolment endpoint answers
         * it too.
         *
         * @throws IllegalArgumentException naming what is missing or malformed
         */
        public static Credential parse(String text) {
            Properties props = new Properties();
            try {
                props.load(new StringReader(text));
            } catch (IOException e) {
                throw new IllegalArgumentException("not a credential: " + e.getMessage(), e);
            }
            String agent = props.getProperty("agent");
            String hosts = props.getProperty("hosts");
            String key = props.getProperty("key");
            if (agent == null || hosts == null || key == null) {
                throw new IllegalArgumentException("an enrolment credential needs agent=, hosts= and key=");
            }
            return new Credential(agent.strip(), Enrolment.hosts(hosts), Base64.getDecoder().decode(key.strip()));
        }

        /** This credential as its file holds it: {@code agent=}, {@code hosts=} and {@code key=} (base64) lines. */
        public String fileText() {
            return "agent=" + agentId + "\nhosts=" + String.join(",", hosts) + "\nkey="
                    + Base64.getEncoder().encodeToString(key) + "\n";
        }

        /** Writes this credential to {@code file}, readable by its owner only. */
        public void write(Path file) throws IOException {
            KafkaAccess.writeOwnerOnly(file, fileText(), true);
        }

        /** This record, signed: the same topic, partition, time, key and value, with the agent's headers. */
        public ProducerRecord<String, byte[]> sign(ProducerRecord<String, byte[]> record) {
            RecordHeaders headers = new RecordHeaders();
            for (Header header : record.headers()) {
                String name = header.key();
                if (!name.equals(AGENT_HEADER) && !name.equals(HOSTS_HEADER) && !name.equals(MAC_HEADER)) {
                    headers.add(header);
                }
            }
            String hostList = String.join(",", hosts);
            headers.add(AGENT_HEADER, agentId.getBytes(StandardCharsets.UTF_8));
            headers.add(HOSTS_HEADER, hostList.getBytes(StandardCharsets.UTF_8));
            byte[] tag = tag(key, record.topic(), record.key(), headers, record.value(), agentId, hostList);
            headers.add(MAC_HEADER, Base64.getEncoder().encode(tag));
            return new ProducerRecord<>(record.topic(), record.partition(), record.timestamp(), record.key(),
                    record.value(), headers);
        }

        /** This agent's own seal: what opens the secret values of a START sealed for it ({@link AgentSeal}). */
        public AgentSeal seal() {
            return AgentSeal.fromAgentKey(agentId, key);
        }

        @Override
        public String toString() {
            return "Credential[agent=" + agentId + ", hosts=" + hosts + "]"; // never the key
        }
    }

    /** Checks agents' records against the enrolment key. */
    public static final class Verifier {

        /** The most enrolments remembered; past it the memory starts again (a forger's made-up ones included). */
        private static final int REMEMBERED = 4096;

        private final byte[] enrolmentKey;
        /** By agent id and host list, as records carry them: the derived key and the hosts' pattern. */
        private final Map<String, Enrolled> enrolled = new ConcurrentHashMap<>();

        private record Enrolled(byte[] key, Pattern hosts) {
        }

        public Verifier(byte[] enrolmentKey) {
            if (enrolmentKey.length < 32) {
                throw new IllegalArgumentException("an enrolment key has at least 32 bytes, this one " + enrolmentKey.length);
            }
            this.enrolmentKey = enrolmentKey.clone();
        }

        /**
         * Checks that {@code record} of an agents' topic was signed by an agent enrolled for {@code nodeId}, the
         * host its payload is about, and that its {@code ce_source} names that host. A record of another topic
         * passes as it is.
         *
         * @throws MalformedEventException naming what is wrong: no signature, a signature that does not match, or
         *     a host the signing agent is not enrolled for
         */
        public void check(ConsumerRecord<String, byte[]> record, String source, String nodeId) {
            if (!signedByAgents(record.topic())) {
                return;
            }
            Headers headers = record.headers();
            String agentId = text(headers, AGENT_HEADER);
            String hostList = text(headers, HOSTS_HEADER);
            String mac = text(headers, MAC_HEADER);
            if (agentId == null || hostList == null || mac == null) {
                throw new MalformedEventException(record.topic() + ": not signed by an enrolled agent (headers '"
                        + AGENT_HEADER + "', '" + HOSTS_HEADER + "' and '" + MAC_HEADER + "' are required)");
            }
            Enrolled enrolment;
            byte[] claimed;
            try {
                enrolment = enrolment(agentId, hostList);
                claimed = Base64.getDecoder().decode(mac);
            } catch (IllegalArgumentException e) {
                throw new MalformedEventException(record.topic() + ": malformed enrolment header: " + e.getMessage());
            }
            byte[] expected = tag(enrolment.key(), record.topic(), record.key(), headers, record.value(), agentId,
                    hostList);
            if (!MessageDigest.isEqual(expected, claimed)) {
                throw new MalformedEventException(record.topic() + ": the signature of agent '" + clip(agentId)
                        + "' does not match: not sent by an agent enrolled for hosts " + clip(hostList)
                        + ", or changed on the way");
            }
            if (!source.equals(SOURCE_PREFIX + nodeId)) {
                throw new MalformedEventException(record.topic() + ": ce_source '" + clip(source)
                        + "' must name the host the event is about, '" + SOURCE_PREFIX + clip(nodeId) + "'");
            }
            if (!enrolment.hosts().matcher(nodeId).matches()) {
                throw new MalformedEventException(record.topic() + ": agent '" + clip(agentId) + "' is enrolled for "
                        + clip(hostList) + ", not for host '" + clip(nodeId) + "'");
            }
        }

        /**
         * The key and hosts' pattern of an agent enrolled for {@code hostList}, worked out once per agent rather
         * than for every record (telemetry passes here thousands of times a second at fleet scale).
         */
        private Enrolled enrolment(String agentId, String hostList) {
            String name = agentId + '\n' + hostList;
            Enrolled known = enrolled.get(name);
            if (known != null) {
                return known;
            }
            KafkaAccess.Principal.parse("agent:" + agentId);
            List<String> hosts = hosts(hostList);
            Enrolled made = new Enrolled(agentKey(enrolmentKey, agentId, hosts), pattern(hosts));
            if (enrolled.size() >= REMEMBERED) {
                enrolled.clear();
            }
            enrolled.put(name, made);
            return made;
        }

        /**
         * The seal of the agent a verified record named ({@link AgentSeal}): what this key holder seals a START's
         * secret values with for that agent, and only that agent's own credential opens.
         *
         * @throws IllegalArgumentException when the id or the host list is not one an agent can be enrolled with
         */
        public AgentSeal sealFor(Agent agent) {
            return AgentSeal.fromAgentKey(agent.id(), enrolment(agent.id(), agent.hostList()).key());
        }

        /** Reads the enrolment key from {@code file} (base64 of at least 32 bytes). */
        public static Verifier read(Path file) throws IOException {
            return new Verifier(readKey(file));
        }
    }

    /**
     * The agent that signed a record, as its headers name it: its id and its host list as it signed them (the list
     * is part of what its key is derived from). Only meaningful once {@link Verifier#check} passed the record.
     */
    public record Agent(String id, String hostList) {

        public Agent {
            Require.text(id, "agent id");
            Require.text(hostList, "agent hosts");
        }

        /** The agent {@code headers} name; {@code null} when they name none (an unsigned record). */
        public static Agent of(Headers headers) {
            String id = text(headers, AGENT_HEADER);
            String hostList = text(headers, HOSTS_HEADER);
            return id == null || id.isBlank() || hostList == null || hostList.isBlank() ? null
                    : new Agent(id, hostList);
        }

        /** The agent that holds {@code credential}, as its signed records name it. */
        public static Agent of(Credential credential) {
            return new Agent(credential.agentId(), String.join(",", credential.hosts()));
        }
    }

    /** The host a payload of an agents' topic is about; for a tombstone (no payload), the record's key. */
    public static String nodeIdOf(Object payload, String key) {
        if (payload == null) {
            return key;
        }
        if (payload instanceof HostInventory p) {
            return p.nodeId();
        } else if (payload instanceof TelemetrySample p) {
            return p.nodeId();
        } else if (payload instanceof NodeEvent p) {
            return p.nodeId();
        } else if (payload instanceof AllocationEvent p) {
            return p.nodeId();
        } else if (payload instanceof UsageEvent p) {
            return p.nodeId();
        } else if (payload instanceof JobLogChunk p) {
            return p.nodeId();
        }
        throw new IllegalArgumentException("not a payload of an agents' topic: " + payload.getClass().getSimpleName());
    }

    private static volatile Verifier configured;
    private static volatile boolean read;

    /**
     * The verifier of this process, from the file {@value #KEY_ENV} names (or the system property
     * {@code gpucloud.enrolment.key}); {@code null} where neither is set, and then agents' records are taken
     * unsigned, as on a broker without logins.
     *
     * @throws IllegalStateException when the file named cannot be read: a service should not start then
     */
    public static Verifier configuredVerifier() {
        if (!read) {
            synchronized (Enrolment.class) {
                if (!read) {
                    configured = verifier(System.getProperty("gpucloud.enrolment.key", System.getenv(KEY_ENV)));
                    read = true;
                }
            }
        }
        return configured;
    }

    /**
     * The verifier of the enrolment key in {@code file}; {@code null} where {@code file} is null, blank or
     * {@code none} (no key: agents' records are taken unsigned). For a service that reads the setting from its own
     * configuration rather than through {@link #configuredVerifier()}.
     *
     * @throws IllegalStateException when the file cannot be read: a service should not start then
     */
    public static Verifier verifier(String file) {
        if (file == null || file.isBlank() || file.equals("none")) {
            return null;
        }
        try {
            return Verifier.read(Path.of(file));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the enrolment key " + file + " (" + KEY_ENV + "): "
                    + e.getMessage(), e);
        }
    }

    /**
     * A line for a service's log at start that says whether agents' records are checked. It reads the enrolment
     * key, so a service that calls it at start does not start with a key it cannot read.
     */
    public static String startupNote() {
        return startupNote(configuredVerifier());
    }

    /** As {@link #startupNote()}, for a service that holds its verifier ({@code null}: none). */
    public static String startupNote(Verifier verifier) {
        return verifier != null
                ? "agents' records must be signed by an agent enrolled for their host (the enrolment key " + KEY_ENV
                        + " names)"
                : "agents' records are taken unsigned: no enrolment key (" + KEY_ENV + "), as on a broker without logins";
    }

    /**
     * Reads the enrolment key in {@code file} (base64 of at least 32 bytes), as the services that verify or mint
     * credentials hold it.
     *
     * @throws IOException naming the file when it cannot be read or holds no key
     */
    public static byte[] readKey(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
        byte[] key;
        try {
            key = Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": not an enrolment key: " + e.getMessage());
        }
        if (key.length < 32) {
            throw new IOException(file + ": not an enrolment key: it has " + key.length + " bytes, at least 32 needed");
        }
        return key;
    }

    /** Reads the enrolment key in {@code file}, making it (readable by its owner only) when missing. */
    public static byte[] enrolmentKey(Path file) throws IOException {
        if (!Files.exists(file)) {
            Files.createDirectories(file.toAbsolutePath().getParent());
            // where another provisioner made it first, its key stays
            KafkaAccess.writeOwnerOnly(file, Base64.getEncoder().encodeToString(newKey()) + "\n", false);
        }
        return Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).strip());
    }

    private static byte[] tag(byte[] key, String topic, String recordKey, Iterable<Header> headers, byte[] value,
            String agentId, String hostList) {
        Mac mac = mac(key);
        field(mac, utf8(topic));
        field(mac, recordKey == null ? new byte[0] : utf8(recordKey));
        for (String name : new String[] {CloudEventHeaders.ID, CloudEventHeaders.TYPE, CloudEventHeaders.SOURCE,
                CloudEventHeaders.TIME}) {
            field(mac, last(headers, name));
        }
        field(mac, utf8(agentId));
        field(mac, utf8(hostList));
        field(mac, value == null ? new byte[0] : value);
        return mac.doFinal();
    }

    private static byte[] last(Iterable<Header> headers, String name) {
        byte[] found = new byte[0];
        for (Header header : headers) {
            if (header.key().equals(name) && header.value() != null) {
                found = header.value();
            }
        }
        return found;
    }

    private static Mac mac(byte[] key) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " is part of every Java runtime", e);
        }
    }

    /** Length-prefixed, so that no two different sets of fields read the same. */
    private static void field(Mac mac, byte[] bytes) {
        mac.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
        mac.update(bytes);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Headers headers, String name) {
        Header header = headers.lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static String clip(String value) {
        String v = value.length() > 64 ? value.substring(0, 64) + "..." : value;
        return v.replaceAll("\\p{Cntrl}", "?");
    }
}
