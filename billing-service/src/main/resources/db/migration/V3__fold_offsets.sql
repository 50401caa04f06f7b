-- The in-memory fold (docs/billing.md, "Exactly once"): per partition of the usage topic, the offset of the next
-- record whose usage is NOT yet in allocation/allocation_interval. Written in the same transaction as that usage,
-- and only if it still holds the value the writing consumer loaded (a consumer that lost its partitions cannot
-- overwrite the new owner's progress). The database, not the consumer group, is the source of truth; the group's
-- committed offsets follow it after each snapshot, for lag monitoring.
CREATE TABLE fold_offset (
    topic           text        NOT NULL,
    kafka_partition integer     NOT NULL CHECK (kafka_partition >= 0),
    next_offset     bigint      NOT NULL CHECK (next_offset >= 0),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, kafka_partition)
);
