package dev.gpucloud.contracts.kafka;

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
 */
public final class EnrolmentSigner implements ProducerInterceptor<String, byte[]> {

    /** The producer setting that names the credential file. */
    public static final String CREDENTIAL_CONFIG = "gpucloud.enrolment.credential";

    private Enrolment.Credential credential;

    @Override
    public void configure(Map<String, ?> configs) {
        Object setting = configs.get(CREDENTIAL_CONFIG);
        credential = Enrolment.Credential.readIfNamed(setting != null ? setting.toString()
                : System.getenv(Enrolment.CREDENTIAL_ENV));
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
