package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Who may do what on the broker: one Kafka principal per service and per node agent, each with the ACLs its
 * work needs and nothing more (docs/security.md, "Kafka"). The broker that {@code ./gpucloud up} starts takes
 * TLS only, authenticates clients with SASL/SCRAM-SHA-512 and authorizes them with KRaft's
 * StandardAuthorizer; only its admin (SASL/PLAIN, the broker's own login) is a super user.
 *
 * <p>Run as {@code java ... KafkaAccess provision BOOTSTRAP ADMIN_CONFIG AUTH_DIR PRINCIPAL...}, where a
 * principal is {@code scheduler}, {@code billing}, {@code metrics}, {@code auditor}, {@code agent:AGENT_ID} or
 * {@code node-agents}: each gets a password (kept in AUTH_DIR/NAME.password, readable by its owner only, made
 * once), its SCRAM credential on the broker, and its ACLs.
 *
 * <p>{@code node-agents} is one login for every agent, for a broker gpucloud does not run on Kubernetes
 * (components/external-kafka), where nothing makes each node's KafkaUser at its enrolment: it may do what an agent
 * does, in any group {@code node-agent-*}. What an agent may say about hosts stays its enrolment's, as everywhere:
 * the readers refuse a record about a host its signature does not cover.
 */
public final class KafkaAccess {

    /** The SASL mechanism services and agents log in with. */
    public static final String MECHANISM = "SCRAM-SHA-512";
    /** SCRAM's work factor for the credentials made here (Kafka's minimum is 4096). */
    static final int ITERATIONS = 8192;
    private static final Pattern AGENT_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

    private KafkaAccess() {
    }

    /** The kinds of client, and what each reads and writes. */
    public enum Role {
        /** Places jobs: reads the fleet and the requests (and jobs' output, for StreamLogs), writes commands to agents and
         * job events. */
        SCHEDULER(List.of(Topics.GPU_INVENTORY, Topics.GPU_TELEMETRY, Topics.NODE_EVENTS, Topics.ALLOCATION_EVENTS,
                Topics.JOB_REQUESTS, Topics.JOB_LOGS),
                List.of(Topics.JOB_EVENTS, Topics.NODE_COMMANDS, Topics.AUDIT_EVENTS),
                "scheduler-"),
        /** Folds usage into invoices; audits catalog changes. */
        BILLING(List.of(Topics.USAGE_EVENTS), List.of(Topics.AUDIT_EVENTS), "billing-"),
        /** Reads the audit trail ({@code gpucloud audit}), without a group: nothing else. */
        AUDITOR(List.of(Topics.AUDIT_EVENTS), List.of(), null),
        /** Reads everything the fleet reports, writes advisories. */
        METRICS(List.of(Topics.GPU_TELEMETRY, Topics.GPU_INVENTORY, Topics.JOB_EVENTS, Topics.ALLOCATION_EVENTS,
                Topics.NODE_EVENTS, Topics.USAGE_EVENTS),
                List.of(Topics.GPU_ADVISORIES),
                "metrics-service"),
        /** A node agent: reports its hosts and its workers' output, takes their commands. */
        AGENT(List.of(Topics.NODE_COMMANDS),
                List.of(Topics.GPU_INVENTORY, Topics.GPU_TELEMETRY, Topics.NODE_EVENTS, Topics.ALLOCATION_EVENTS,
                        Topics.USAGE_EVENTS, Topics.JOB_LOGS),
                "node-agent-");

        private final List<Topic<?>> reads;
        private final List<Topic<?>> writes;
        private final String groupPrefix;

        Role(List<Topic<?>> reads, List<Topic<?>> writes, String groupPrefix) {
            this.reads = reads;
            this.writes = writes;
            this.groupPrefix = groupPrefix;
        }

        public List<Topic<?>> reads() {
            return reads;
        }

        public List<Topic<?>> writes() {
            return writes;
        }
    }

    /** The one login of every agent where the broker is not Strimzi's (see the class's words). */
    public static final String SHARED_AGENTS = "node-agents";

    /**
     * A client's identity on the broker: its user name and role, and for one agent its id (which names its group);
     * the agents' shared login has none.
     */
    public record Principal(String name, Role role, String agentId) {

        /** Parses {@code scheduler}, {@code billing}, {@code metrics}, {@code agent:AGENT_ID} or {@code node-agents}. */
        public static Principal parse(String spec) {
            if (spec.startsWith("agent:")) {
                String id = spec.substring("agent:".length());
                if (!AGENT_ID.matcher(id).matches()) {
                    throw new IllegalArgumentException("agent id '" + Clip.of(id) + "' must be 1-63 letters, digits, "
                            + "'.', '_' or '-', starting with a letter or digit");
                }
                return new Principal("agent-" + id, Role.AGENT, id);
            }
            return switch (spec) {
                case "scheduler" -> new Principal("scheduler", Role.SCHEDULER, null);
                case "billing" -> new Principal("billing", Role.BILLING, null);
                case "metrics" -> new Principal("metrics", Role.METRICS, null);
                case "auditor" -> new Principal("auditor", Role.AUDITOR, null);
                case SHARED_AGENTS -> new Principal(SHARED_AGENTS, Role.AGENT, null);
                default -> throw new IllegalArgumentException("unknown principal '" + Clip.of(spec)
                        + "': scheduler, billing, metrics, auditor, agent:AGENT_ID or " + SHARED_AGENTS);
            };
        }

        public String kafkaPrincipal() {
            return "User:" + name;
        }
    }

    /** Every ACL a principal needs: read and describe its input topics, write its output topics and its dead
     * letters, and use its consumer groups. */
    public static List<AclBinding> bindings(Principal principal) {
        Role role = principal.role();
        Set<String> read = new LinkedHashSet<>();
        Set<String> write = new LinkedHashSet<>();
        for (Topic<?> topic : role.reads) {
            read.add(topic.name());
            if (role != Role.AUDITOR) {
                write.add(topic.deadLetterTopic()); // a consumer dead-letters what it cannot read
            }
        }
        for (Topic<?> topic : role.writes) {
            write.add(topic.name());
        }
        List<AclBinding> acls = new ArrayList<>();
        for (String topic : read) {
            acls.add(allow(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ));
            acls.add(allow(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.DESCRIBE));
        }
        for (String topic : write) {
            acls.add(allow(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.WRITE));
            acls.add(allow(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.DESCRIBE));
        }
        if (role == Role.AUDITOR) {
            // reads with assigned partitions and commits nothing: no group
        } else if (role == Role.AGENT && principal.agentId() == null) {
            // every agent's login: whichever agent it is, its group is node-agent-ITS_ID
            acls.add(allow(principal, ResourceType.GROUP, role.groupPrefix, PatternType.PREFIXED, AclOperation.READ));
        } else if (role == Role.AGENT) {
            // an agent's group is its own: node-agent-AGENT_ID, as node-agent's commands-in channel names it
            acls.add(allow(principal, ResourceType.GROUP, role.groupPrefix + principal.agentId(), PatternType.LITERAL,
                    AclOperation.READ));
        } else {
            // a service's groups
            acls.add(allow(principal, ResourceType.GROUP, role.groupPrefix, PatternType.PREFIXED, AclOperation.READ));
        }
        if (role == Role.METRICS) {
            // the consumer-lag panels read every group's committed offsets
            acls.add(allow(principal, ResourceType.GROUP, "*", PatternType.LITERAL, AclOperation.DESCRIBE));
            for (Topic<?> topic : Topics.all()) {
                for (String name : List.of(topic.name(), topic.deadLetterTopic())) {
                    acls.add(allow(principal, ResourceType.TOPIC, name, PatternType.LITERAL, AclOperation.DESCRIBE));
                }
            }
        }
        return List.copyOf(new LinkedHashSet<>(acls));
    }

    private static AclBinding allow(Principal principal, ResourceType type, String name, PatternType pattern,
            AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal.kafkaPrincipal(), "*", operation, AclPermissionType.ALLOW));
    }

    /**
     * A client's settings for logging in as a user with SCRAM, reaching the broker as {@code transport} says
     * (its security protocol and the CA it trusts: the admin's, say).
     */
    public static Map<String, Object> scramClient(String user, String password, Properties transport) {
        Map<String, Object> settings = new java.util.HashMap<>();
        for (String key : TRANSPORT_KEYS) {
            if (transport.containsKey(key)) {
                settings.put(key, transport.getProperty(key));
            }
        }
        settings.putIfAbsent(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        settings.put(SaslConfigs.SASL_MECHANISM, MECHANISM);
        settings.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"" + user + "\" password=\"" + password + "\";");
        return Map.copyOf(settings);
    }

    /** The settings that say how a client logs in ({@code security.protocol}, {@code sasl.*}, {@code ssl.*}). */
    public static final List<String> LOGIN_KEYS = List.of(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG,
            SaslConfigs.SASL_MECHANISM, SaslConfigs.SASL_JAAS_CONFIG, SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG,
            SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG);
    /** The settings of a login that say how to reach the broker rather than who one is. */
    static final List<String> TRANSPORT_KEYS = List.of(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG,
            SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG);

    /**
     * A service's login settings for the Kafka clients it makes itself, from the same {@code kafka.*} settings
     * its messaging channels use: {@code lookup} is the service's configuration.
     */
    public static Map<String, Object> loginSettings(java.util.function.Function<String, java.util.Optional<String>> lookup) {
        Map<String, Object> settings = new java.util.HashMap<>();
        for (String key : LOGIN_KEYS) {
            lookup.apply("kafka." + key).ifPresent(value -> settings.put(key, value));
        }
        return Map.copyOf(settings);
    }

    /** Reads a client configuration file (the admin's, say) written by deploy/local/kafka.sh. */
    public static Properties clientConfig(Path file) throws IOException {
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            props.load(in);
        }
        return props;
    }

    /** The principal's password from AUTH_DIR/NAME.password, made (random, 32 characters) when missing. */
    public static String password(Path authDir, Principal principal) throws IOException {
        Path file = authDir.resolve(principal.name() + ".password");
        if (Files.exists(file)) {
            return Files.readString(file, StandardCharsets.US_ASCII).strip();
        }
        Files.createDirectories(authDir);
        String password = randomPassword();
        Files.writeString(file, password + "\n", StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE);
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: the folder's own permissions are all there is
        }
        return password;
    }

    /** A client settings file (for Kafka's own tools, or AccessProbe), readable by its owner only. */
    static void writeClientConfig(Path file, Map<String, Object> settings) throws IOException {
        StringBuilder sb = new StringBuilder();
        settings.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> sb.append(e.getKey()).append('=').append(e.getValue()).append('\n'));
        writeOwnerOnly(file, sb.toString(), true);
    }

    /**
     * Writes {@code text} to {@code file}, readable by its owner only from the start (through a temporary file
     * moved into place). Where {@code replace} is false and the file appeared meanwhile, the file stays as it
     * is and this returns false.
     */
    static boolean writeOwnerOnly(Path file, String text, boolean replace) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        Files.writeString(tmp, "", StandardOpenOption.CREATE_NEW);
        try {
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system
        }
        Files.writeString(tmp, text, StandardCharsets.US_ASCII);
        try {
            if (replace) {
                Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } else {
                Files.move(tmp, file); // an atomic rename would replace a file that appeared meanwhile
            }
            return true;
        } catch (java.nio.file.FileAlreadyExistsException e) {
            Files.deleteIfExists(tmp);
            return false;
        }
    }

    /** A random password of 32 letters and digits (about 188 bits), for a SCRAM login. */
    public static String randomPassword() {
        String alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
        SecureRandom random = new SecureRandom();
        StringBuilder sb = new StringBuilder(32);
        for (int i = 0; i < 32; i++) {
            sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    /** Gives each principal its SCRAM credential (its password, kept in authDir) and its ACLs. */
    public static void provision(Admin admin, Path authDir, Properties transport, Collection<Principal> principals)
            throws Exception {
        List<UserScramCredentialUpsertion> credentials = new ArrayList<>();
        List<AclBinding> acls = new ArrayList<>();
        for (Principal principal : principals) {
            String password = password(authDir, principal);
            credentials.add(new UserScramCredentialUpsertion(principal.name(),
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, ITERATIONS), password));
            acls.addAll(bindings(principal));
            writeClientConfig(authDir.resolve(principal.name() + ".properties"),
                    scramClient(principal.name(), password, transport));
        }
        admin.alterUserScramCredentials(List.copyOf(credentials)).all().get(30, TimeUnit.SECONDS);
        admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
    }

    /**
     * Writes each agent's enrolment credential (AUTH_DIR/agent-ID.enrolment, readable by its owner only), minted
     * with the stack's enrolment key (AUTH_DIR/enrolment.key, made when missing): see {@link Enrolment}.
     */
    static void enrol(Path authDir, Map<String, List<String>> enrolments) throws IOException {
        if (enrolments.isEmpty()) {
            return;
        }
        byte[] key = Enrolment.enrolmentKey(authDir.resolve("enrolment.key"));
        for (Map.Entry<String, List<String>> e : enrolments.entrySet()) {
            Enrolment.Credential.mint(key, e.getKey(), e.getValue())
                    .write(authDir.resolve("agent-" + e.getKey() + ".enrolment"));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4 || !args[0].equals("provision")) {
            System.err.println("usage: KafkaAccess provision BOOTSTRAP ADMIN_CONFIG AUTH_DIR PRINCIPAL..."
                    + " (agent:ID[=HOST,...] enrols an agent for its hosts)");
            System.exit(2);
        }
        List<Principal> principals = new ArrayList<>();
        Map<String, List<String>> enrolments = new java.util.LinkedHashMap<>();
        for (int i = 4; i < args.length; i++) {
            // agent:ID=HOSTS enrols the agent for those hosts (names or globs); agent:ID alone for host ID
            String spec = args[i];
            int eq = spec.indexOf('=');
            Principal principal = Principal.parse(eq < 0 ? spec : spec.substring(0, eq));
            if (eq >= 0 && principal.agentId() == null) {
                throw new IllegalArgumentException("only an agent is enrolled for hosts: " + Clip.of(spec));
            }
            principals.add(principal);
            if (principal.agentId() != null) {
                enrolments.put(principal.agentId(), Enrolment.hosts(eq < 0 ? principal.agentId() : spec.substring(eq + 1)));
            }
        }
        Properties props = clientConfig(Path.of(args[2]));
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        try (Admin admin = Admin.create(props)) {
            provision(admin, Path.of(args[3]), clientConfig(Path.of(args[2])), principals);
        }
        enrol(Path.of(args[3]), enrolments);
        System.out.println("kafka principals with their ACLs: "
                + String.join(", ", principals.stream().map(Principal::name).toList()));
    }

    /** A value quoted back in an error message, cut short and without control characters. */
    static String clip(String value) {
        return Clip.of(value);
    }

    /** Quotes a value back in an error message without letting it run on. */
    private static final class Clip {
        static String of(String value) {
            String v = value.length() > 64 ? value.substring(0, 64) + "..." : value;
            return v.replaceAll("\\p{Cntrl}", "?");
        }
    }
}
