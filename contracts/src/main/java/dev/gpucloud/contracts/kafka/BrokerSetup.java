package dev.gpucloud.contracts.kafka;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.config.SslConfigs;

/**
 * Makes a broker that gpucloud does not run ready for the manifests of deploy/k8s with components/external-kafka
 * (docs/kubernetes.md, "A broker gpucloud does not run"): every topic and its dead letters, replicated as asked; a
 * SCRAM-SHA-512 login with its ACLs for each of the scheduler, billing, metrics, the auditor and the node agents'
 * shared login ({@value KafkaAccess#SHARED_AGENTS}); and, for the cluster's operator, the {@code kubectl} commands
 * that make the Secrets the overlay names from what was made here. Where the broker's logins are made elsewhere (a
 * managed service that keeps SCRAM users in its own secret store), {@code --acls-only} sets the ACLs for those
 * user names and makes no credential.
 *
 * <p>Run as {@code java ... BrokerSetup BOOTSTRAP ADMIN_CONFIG OUT_DIR [--replication-factor N] [--acls-only]
 * [--namespace NS]}: ADMIN_CONFIG is a Kafka client settings file that logs in as a user who may create topics,
 * credentials and ACLs; OUT_DIR receives each login's password and client settings, readable by their owner only.
 * Run again, it changes nothing that is already right and keeps the passwords it made.
 */
public final class BrokerSetup {

    /** The principals a cluster's workloads (and {@code gpucloud audit}) log in as. */
    static final List<String> PRINCIPALS = List.of("scheduler", "billing", "metrics", "auditor",
            KafkaAccess.SHARED_AGENTS);
    /** The Secret that holds the broker's address and CA for the workloads (components/external-kafka). */
    static final String ADDRESS_SECRET = "gpucloud-kafka-external";

    private BrokerSetup() {
    }

    /** What a setup did, and what its operator does next. */
    record Done(List<String> topicsCreated, List<String> topicsCorrected, List<String> principals,
            List<String> commands) {
    }

    static Done run(String bootstrap, Properties admin, Path out, short replication, boolean aclsOnly,
            String namespace) throws Exception {
        TopicProvisioner.Provisioned topics = TopicProvisioner.provision(bootstrap, admin, replication);
        List<KafkaAccess.Principal> principals = PRINCIPALS.stream().map(KafkaAccess.Principal::parse).toList();
        Properties props = new Properties();
        props.putAll(admin);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        try (Admin client = Admin.create(props)) {
            if (aclsOnly) {
                List<AclBinding> acls = new ArrayList<>();
                principals.forEach(p -> acls.addAll(KafkaAccess.bindings(p)));
                client.createAcls(acls).all().get(30, TimeUnit.SECONDS);
            } else {
                KafkaAccess.provision(client, out, admin, principals);
            }
        }
        List<String> commands = new ArrayList<>();
        String ns = namespace == null ? "" : " -n " + namespace;
        for (KafkaAccess.Principal principal : principals) {
            if (principal.name().equals("auditor")) {
                continue; // an operator's login for `gpucloud audit`, not a workload's
            }
            if (aclsOnly) {
                commands.add("kubectl" + ns + " create secret generic " + principal.name()
                        + " --from-file=password=<a file holding " + principal.name() + "'s password, no newline>");
            } else {
                // the Secret's value must not end in a newline (the password file's does): a file of its own
                Path file = out.resolve("k8s").resolve(principal.name() + ".password");
                Files.createDirectories(file.getParent());
                KafkaAccess.writeOwnerOnly(file, KafkaAccess.password(out, principal), true);
                commands.add("kubectl" + ns + " create secret generic " + principal.name() + " --from-file=password="
                        + file);
            }
        }
        String ca = "PEM".equalsIgnoreCase(admin.getProperty(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, ""))
                ? admin.getProperty(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG) : null;
        commands.add("kubectl" + ns + " create secret generic " + ADDRESS_SECRET + " --from-literal=bootstrap="
                + bootstrap + " --from-file=ca.crt=" + (ca == null ? "<the CA of the brokers' certificate, PEM>" : ca));
        return new Done(topics.created(), topics.corrected(), PRINCIPALS, commands);
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(List.of(args));
        try {
            short replication = TopicProvisioner.replicationOption(rest);
            boolean aclsOnly = rest.remove("--acls-only");
            String namespace = null;
            int at = rest.indexOf("--namespace");
            if (at >= 0) {
                if (at + 1 >= rest.size()) {
                    throw new IllegalArgumentException("--namespace needs a name");
                }
                namespace = rest.remove(at + 1);
                rest.remove(at);
                if (!namespace.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
                    throw new IllegalArgumentException("--namespace must be a Kubernetes namespace name, not '"
                            + KafkaAccess.clip(namespace) + "'");
                }
            }
            if (rest.size() != 3 || rest.stream().anyMatch(a -> a.startsWith("--"))) {
                throw new IllegalArgumentException("usage: BrokerSetup BOOTSTRAP ADMIN_CONFIG OUT_DIR"
                        + " [--replication-factor N] [--acls-only] [--namespace NS]");
            }
            Path adminConfig = Path.of(rest.get(1));
            if (!Files.isReadable(adminConfig)) {
                throw new IllegalArgumentException("cannot read the admin's client settings " + adminConfig);
            }
            Done done = run(rest.get(0), KafkaAccess.clientConfig(adminConfig), Path.of(rest.get(2)), replication,
                    aclsOnly, namespace);
            System.out.println(done.topicsCreated().isEmpty() ? "topics: every one was there already"
                    : "topics created (replication " + replication + "): " + String.join(", ", done.topicsCreated()));
            if (!done.topicsCorrected().isEmpty()) {
                System.out.println("topics corrected: " + String.join("; ", done.topicsCorrected()));
            }
            System.out.println((aclsOnly ? "ACLs set for the users " : "logins and ACLs for ")
                    + String.join(", ", done.principals()) + (aclsOnly ? "" : " (passwords in " + rest.get(2) + ")"));
            System.out.println("make the Secrets that components/external-kafka names:");
            done.commands().forEach(c -> System.out.println("  " + c));
        } catch (IllegalArgumentException e) {
            System.err.println("broker setup: " + e.getMessage());
            System.exit(2);
        } catch (java.util.concurrent.ExecutionException e) {
            // the broker's refusal or silence, in its own words (an admin without the right, a wrong password)
            Throwable cause = e.getCause() == null ? e : e.getCause();
            System.err.println("broker setup: the broker at " + rest.get(0) + " refused or did not answer: "
                    + cause.getClass().getSimpleName() + ": " + cause.getMessage());
            System.exit(1);
        }
    }
}
