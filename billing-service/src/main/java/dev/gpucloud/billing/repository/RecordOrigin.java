package dev.gpucloud.billing.repository;

/** Where a consumed record came from, kept in the ledger for audits and replays. */
public record RecordOrigin(String topic, int partition, long offset) {
}
