-- billing-service schema. Flyway owns it; every change is a new V<n>__*.sql file, never an edit.

-- One row per usage event ever applied, keyed by its CloudEvent id (ce_id). Inserting it in the same
-- transaction as the usage it carries is what makes a redelivered event a no-op.
CREATE TABLE usage_ledger (
    event_id        text        PRIMARY KEY,
    allocation_id   text        NOT NULL,
    event_source    text        NOT NULL,
    event_time      timestamptz NOT NULL,
    from_ts         timestamptz NOT NULL,
    to_ts           timestamptz NOT NULL,
    -- how much usage, in microseconds, this event added to its allocation's union (0: already covered)
    added_micros    bigint,
    kafka_topic     text        NOT NULL,
    kafka_partition integer     NOT NULL,
    kafka_offset    bigint      NOT NULL,
    applied_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_ledger_allocation ON usage_ledger (allocation_id);

-- An allocation's billing dimensions, fixed by its first usage report.
CREATE TABLE allocation (
    allocation_id   text        PRIMARY KEY,
    tenant          text        NOT NULL,
    job_id          text        NOT NULL,
    node_id         text        NOT NULL,
    zone            text        NOT NULL,
    gpu_model       text        NOT NULL,
    mig_profile     text,
    milli_gpu       integer     NOT NULL CHECK (milli_gpu BETWEEN 1 AND 1000),
    units           integer     NOT NULL CHECK (units >= 1),
    capacity_type   text        NOT NULL,
    first_seen      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX allocation_tenant ON allocation (tenant);

-- The union of an allocation's reported usage: intervals [from_ts, to_ts) that neither overlap nor touch.
CREATE TABLE allocation_interval (
    allocation_id   text        NOT NULL REFERENCES allocation (allocation_id),
    from_ts         timestamptz NOT NULL,
    to_ts           timestamptz NOT NULL,
    PRIMARY KEY (allocation_id, from_ts),
    CHECK (to_ts > from_ts)
);
