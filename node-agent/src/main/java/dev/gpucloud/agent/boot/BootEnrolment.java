package dev.gpucloud.agent.boot;

import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EnrolmentClient;
import dev.gpucloud.contracts.kafka.KafkaLogin;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.logging.Logger;

/**
 * A node agent's enrolment on Kubernetes before Quarkus boots (docs/security.md, "Enrolment on Kubernetes"): the
 * agent's Kafka clients take their login from the configuration when they are made, so the login the scheduler
 * answers with the credential must be in the configuration before any bean runs. Where {@value
 * EnrolmentClient#URL_ENV} is set, this asks the scheduler (or, after a container restart in the same pod, reads the
 * files the first start wrote: the credential, and the login beside it, both owner-only) and hands the login to the
 * Kafka settings. Without an enrolment URL nothing happens: one machine and the tests log in as configured.
 */
public final class BootEnrolment {

    /**
     * The names the login goes under: application.properties' {@code kafka.sasl.jaas.config} reads
     * {@code ${GPUCLOUD_KAFKA_USER}} and {@code ${GPUCLOUD_KAFKA_PASSWORD}}, and Quarkus's configuration finds system
     * properties before the environment.
     */
    public static final String USER_PROPERTY = "GPUCLOUD_KAFKA_USER";
    public static final String PASSWORD_PROPERTY = "GPUCLOUD_KAFKA_PASSWORD";
    /**
     * The agent's id, which names its consumer group ({@code node-agent-ID}, the one group its KafkaUser may use):
     * the enrolled id, which differs from the node's name where that is longer than 63 characters.
     */
    public static final String AGENT_ID_PROPERTY = "gpucloud.agent.id";

    private static final Logger LOG = Logger.getLogger(BootEnrolment.class.getName());

    private BootEnrolment() {
    }

    /**
     * This agent's enrolment, as {@code env} describes it ({@value EnrolmentClient#URL_ENV},
     * {@value Enrolment#CREDENTIAL_ENV}, {@value EnrolmentClient#TOKEN_ENV}, {@value EnrolmentClient#CA_ENV}): its
     * credential and its Kafka login (null where the scheduler gives none); null where there is no enrolment URL.
     *
     * @throws IOException the scheduler refused (an {@link EnrolmentClient.Refused}) or did not answer in time, or a
     *     file could not be read or written: the agent must not start
     */
    public static EnrolmentClient.Answer enrol(Map<String, String> env) throws IOException {
        String url = env.get(EnrolmentClient.URL_ENV);
        if (url == null || url.isBlank()) {
            return null;
        }
        String file = env.get(Enrolment.CREDENTIAL_ENV);
        if (file == null || file.isBlank() || file.equals("none")) {
            throw new IOException(EnrolmentClient.URL_ENV + " is set but " + Enrolment.CREDENTIAL_ENV
                    + " names no file to keep the credential in");
        }
        Path credential = Path.of(file.strip());
        Path loginFile = KafkaLogin.besideCredential(credential);
        if (Files.exists(credential)) {
            // the same pod, restarted: the credential file is written last, so its login (if any) is there too
            Enrolment.Credential kept = Enrolment.Credential.read(credential);
            KafkaLogin login = Files.exists(loginFile) ? KafkaLogin.read(loginFile) : null;
            LOG.info(() -> "enrolled before as agent " + kept.agentId() + " (" + credential + ")"
                    + (login == null ? "" : ", Kafka user " + login.user()));
            return new EnrolmentClient.Answer(kept, login);
        }
        return EnrolmentClient.of(url, env.get(EnrolmentClient.TOKEN_ENV), env.get(EnrolmentClient.CA_ENV))
                .enrol(credential, loginFile);
    }

    /**
     * Hands the enrolled id and the login (where there is one) to the agent's settings. System properties rather than Kafka's
     * {@code config.providers}: the properties reach every Kafka client the agent makes (its channels and those
     * built from {@code kafka.*} settings) through the one {@code kafka.sasl.jaas.config} line, with no second
     * way of configuring a login; a provider's {@code ${file:...}} would first have to survive Quarkus's own
     * expansion of {@code ${...}}. The price: the password is in this JVM's system properties, which only this
     * process, or a debugger of its user (who can read the login file anyway), can see.
     */
    public static void apply(EnrolmentClient.Answer enrolled) {
        System.setProperty(AGENT_ID_PROPERTY, enrolled.credential().agentId());
        KafkaLogin login = enrolled.login();
        if (login != null) {
            System.setProperty(USER_PROPERTY, login.user());
            System.setProperty(PASSWORD_PROPERTY, login.password());
        }
    }
}
