package dev.gpucloud.contracts.events;

/** A decoded record: its key, its CloudEvents attributes, and its payload (null for a tombstone). */
public record Envelope<T>(String key, CloudEvent event, T payload) {
    public boolean isTombstone() {
        return payload == null;
    }
}
