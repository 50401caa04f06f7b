package dev.gpucloud.contracts.kafka;

import java.io.IOException;
import java.nio.file.Files;
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
 * <p>On Kubernetes the file does not exist when the pod starts: where an enrolment URL is set
 * ({@value #URL_CONFIG}, else {@value EnrolmentClient#URL_ENV}), a missing file is fetched from the scheduler first
 * ({@link EnrolmentClient}). That happens here, in {@link #configure}, because this is the one place that reads the
 * credential and the producer calls it before it can send anything: the agent cannot send a record, signed or
 * not, before it is enrolled, whatever order its other beans start in. Its start waits meanwhile.
 */
public final class EnrolmentSigner implements ProducerInterceptor<String, byte[]> {

    /** The producer setting that names the credential file. */
    public static final String CREDENTIAL_CONFIG = "gpucloud.enrolment.credential";
    /** The producer setting with the scheduler's enrolment URL (else {@value EnrolmentClient#URL_ENV}). */
    public static final String URL_CONFIG = "gpucloud.enrolment.url";
    /** The producer setting naming the service account token file (else {@value EnrolmentClient#TOKEN_ENV}). */
    public static final String TOKEN_CONFIG = "gpucloud.enrolment.token-file";
    /** The producer setting naming the scheduler's CA file (else {@value EnrolmentClient#CA_ENV}). */
    public static final String CA_CONFIG = "gpucloud.enrolment.ca";

    private Enrolment.Credential credential;

    @Override
    public void configure(Map<String, ?> configs) {
        credential = credential(configs);
    }

    /**
     * This agent's credential, from the settings in {@code configs} or else the environment: read from its file, or,
     * where the file is missing and an enrolment URL is set, fetched from the scheduler and written there first.
     * {@code null} where no file is named. The node agent's runner asks here too (for the seal its STARTs' secrets
     * open with), so whichever of the two comes first enrols, and the other reads the file it wrote.
     *
     * @throws IllegalStateException when the file cannot be read or the enrolment is refused: the agent should not
     *     start then
     */
    public static synchronized Enrolment.Credential credential(Map<String, ?> configs) {
        String file = setting(configs, CREDENTIAL_CONFIG, Enrolment.CREDENTIAL_ENV);
        if (file == null || file.isBlank() || file.equals("none")) {
            return null;
        }
        String url = setting(configs, URL_CONFIG, EnrolmentClient.URL_ENV);
        if (url != null && !url.isBlank() && !Files.exists(Path.of(file))) {
            try {
                return EnrolmentClient.of(url, setting(configs, TOKEN_CONFIG, EnrolmentClient.TOKEN_ENV),
                        setting(configs, CA_CONFIG, EnrolmentClient.CA_ENV)).enrol(Path.of(file));
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalStateException("cannot enrol this agent at " + url + ": " + e.getMessage(), e);
            }
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
