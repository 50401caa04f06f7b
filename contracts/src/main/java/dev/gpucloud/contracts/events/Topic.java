package dev.gpucloud.contracts.events;

/**
 * A Kafka topic of gpucloud: its name, what its key is, how many partitions, how it is cleaned, the
 * payload type, and the CloudEvents type its records carry.
 */
public record Topic<T>(String name, String key, int partitions, Cleanup cleanup, Class<T> payloadType, String eventType) {

    /** Kafka's cleanup.policy. */
    public enum Cleanup {
        DELETE("delete"),
        COMPACT("compact");

        public final String policy;

        Cleanup(String policy) {
            this.policy = policy;
        }
    }

    public Topic {
        Require.text(name, "name");
        Require.text(key, "key");
        Require.atLeast(partitions, 1, "partitions");
        Require.present(cleanup, "cleanup");
        Require.present(payloadType, "payloadType");
        Require.text(eventType, "eventType");
    }

    /** Where records that could not be processed go, with the reason in headers. */
    public String deadLetterTopic() {
        return name + ".dlq";
    }
}
