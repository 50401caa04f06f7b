package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.UUID;

/**
 * The CloudEvents 1.0 attributes every record carries (binary mode: as {@code ce_*} headers).
 * {@code id} is unique per event, so consumers can drop repeats.
 */
public record CloudEvent(String id, String type, String source, Instant time) {
    public static final String SPEC_VERSION = "1.0";

    public CloudEvent {
        Require.text(id, "ce_id");
        Require.text(type, "ce_type");
        Require.text(source, "ce_source");
        Require.present(time, "ce_time");
    }

    /** A new event with a random id. */
    public static CloudEvent create(String type, String source, Instant time) {
        return new CloudEvent(UUID.randomUUID().toString(), type, source, time);
    }
}
