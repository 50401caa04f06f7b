package dev.gpucloud.billing.repository;

/** Where a consumed record came from (topic, partition, offset), for log lines. */
public record RecordOrigin(String topic, int partition, long offset) {
}
