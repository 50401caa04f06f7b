package dev.gpucloud.contracts.events;

/**
 * A Kafka topic of gpucloud: its name, what its key is, how many partitions, how it is cleaned, the
 * payload type, the CloudEvents type its records carry, and how long its records are kept where that is the
 * topic's own ({@code retention.ms}; null: the broker's default).
 */
public record Topic<T>(String name, String key, int partitions, Cleanup cleanup, Class<T> payloadType, String eventType,
        java.time.Duration retention) {

    /** Kafka's cleanup.policy. */
    public enum Cleanup {
        DELETE("delete"),
        COMPACT("compact");

        public final String policy;

        Cleanup(String policy) {
            this.policy = policy;
        }
    }

    /** A topic kept as long as the broker keeps topics by default (its log.retention). */
    public Topic(String name, String key, int partitions, Cleanup cleanup, Class<T> payloadType, String eventType) {
        this(name, key, partitions, cleanup, payloadType, eventType, null);
    }

    public Topic {
        Require.text(name, "name");
        Require.text(key, "key");
        Require.atLeast(partitions, 1, "partitions");
        Require.present(cleanup, "cleanup");
        Require.present(payloadType, "payloadType");
        Require.text(eventType, "eventType");
        if (retention != null && (retention.isNegative() || retention.isZero())) {
            throw new IllegalArgumentException("field 'retention' must be positive, was " + retention);
        }
    }

    /** Where records that could not be processed go, with the reason in headers. */
    public String deadLetterTopic() {
        return name + ".dlq";
    }
}
