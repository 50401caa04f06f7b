package dev.gpucloud.agent.spool;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One record to send, exactly as it will reach the broker: topic, key, headers (the CloudEvents
 * attributes, so a record sent again carries the same ce_id) and value (null for a tombstone).
 */
public record SpooledRecord(String topic, String key, Map<String, byte[]> headers, byte[] value) {

    public SpooledRecord {
        if (topic == null || topic.isBlank()) {
            throw new IllegalArgumentException("topic must not be blank");
        }
        Objects.requireNonNull(headers, "headers");
        headers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /** The header's value as text, or null. */
    public String header(String name) {
        byte[] value = headers.get(name);
        return value == null ? null : new String(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SpooledRecord other)) {
            return false;
        }
        if (!topic.equals(other.topic) || !Objects.equals(key, other.key) || !Arrays.equals(value, other.value)
                || headers.size() != other.headers.size()) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : headers.entrySet()) {
            if (!Arrays.equals(e.getValue(), other.headers.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, key, Arrays.hashCode(value));
    }

    @Override
    public String toString() {
        return topic + "/" + key + " (ce_id " + header("ce_id") + ")";
    }
}
