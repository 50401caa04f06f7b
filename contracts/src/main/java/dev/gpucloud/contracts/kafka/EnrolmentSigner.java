package dev.gpucloud.contracts.kafka;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Signs every record a node agent sends to an agents' topic with its enrolment credential ({@link Enrolment}),
 * as a Kafka producer interceptor, so that nothing the agent sends (spooled, shed or sent at once) leaves
 * unsigned. The credential file is the producer setting {@value #CREDENTIAL_CONFIG}, else the file
 * {@value Enrolment#CREDENTIAL_ENV} names; with neither, records leave as they are (a broker without logins).
 * A file named but unreadable fails the producer's start, and so the agent's.
 *
 * <p>On Kubernetes the file is written before anything here runs: the node agent enrols at the scheduler before
 * Quarkus boots (node-agent's {@code AgentMain}), since the Kafka login it gets with the credential must be in the
 * configuration before any Kafka client is made. One place enrols; this one only reads.
 */
public final class EnrolmentSigner implements ProducerInterceptor<String, byte[]> {

    /** The producer setting that names the credential file. */
    public static final String CREDENTIAL_CONFIG = "gpucloud.enrolment.credential";

    private Enrolment.Credential credential;

    @Override
    public void configure(Map<String, ?> configs) {
        credential = credential(configs);
    }

    /**
     * This agent's credential, from the file the setting in {@code configs} or else the environment names;
     * {@code null} where none is named. The node agent's runner reads it here too, for the seal its STARTs' secrets
     * open with.
     *
     * @throws IllegalStateException when the file cannot be read: the agent should not start then
     */
    public static Enrolment.Credential credential(Map<String, ?> configs) {
        String file = setting(configs, CREDENTIAL_CONFIG, Enrolment.CREDENTIAL_ENV);
        if (file == null || file.isBlank() || file.equals("none")) {
            return null;
        }
        try {
            return Enrolment.Credential.read(Path.of(file));
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot read the enrolment credential " + file + ": " + e.getMessage(), e);
        }
    }

    private static String setting(Map<String, ?> configs, String name, String env) {
        Object value = configs.get(name);
        return value != null ? value.toString() : System.getenv(env);
    }

    /** The credential records are signed with; {@code null} when none is configured. */
    public Enrolment.Credential credential() {
        return credential;
    }

    @Override
    public ProducerRecord<String, byte[]> onSend(ProducerRecord<String, byte[]> record) {
        if (credential == null || !Enrolment.signedByAgents(record.topic())) {
            return record;
        }
        return credential.sign(record);
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
    }

    @Override
    public void close() {
    }
}
