-- Closed invoices, corrections of closed months, and operator price updates.

-- A tenant's invoice for a calendar month (UTC, 'YYYY-MM') once CLOSED: a row here means the month is frozen.
-- A month without a row is OPEN and priced from the stored usage whenever it is read.
CREATE TABLE invoice (
    tenant          text        NOT NULL,
    month           text        NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
    closed_at       timestamptz NOT NULL DEFAULT now(),
    total_micros    bigint      NOT NULL,
    PRIMARY KEY (tenant, month)
);

-- The frozen lines of a closed invoice: its own usage (kind USAGE, for_month = month) and the adjustments it
-- settled for earlier closed months (kind ADJUSTMENT, for_month < month, seconds and amount may be negative).
CREATE TABLE invoice_line (
    tenant               text        NOT NULL,
    month                text        NOT NULL,
    line_no              integer     NOT NULL,
    kind                 text        NOT NULL CHECK (kind IN ('USAGE', 'ADJUSTMENT')),
    for_month            text        NOT NULL,
    reason               text,
    job_id               text        NOT NULL,
    sku                  text        NOT NULL,
    capacity_type        text        NOT NULL,
    seconds              bigint      NOT NULL,
    rate_micros_per_hour bigint      NOT NULL,
    amount_micros        bigint      NOT NULL,
    flag                 text,
    rate_from            timestamptz,
    PRIMARY KEY (tenant, month, line_no),
    FOREIGN KEY (tenant, month) REFERENCES invoice (tenant, month)
);
CREATE INDEX invoice_line_for_month ON invoice_line (tenant, for_month);

-- Why a closed month may owe more (or less) than it billed: usage that arrived after it closed, or held usage
-- the catalog has priced since. Settled (settled_in = the invoice that carried the adjustment) when that
-- invoice closes.
CREATE TABLE late_usage (
    id           bigserial   PRIMARY KEY,
    tenant       text        NOT NULL,
    month        text        NOT NULL,
    reason       text        NOT NULL,
    event_id     text,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    settled_in   text
);
CREATE INDEX late_usage_pending ON late_usage (tenant) WHERE settled_in IS NULL;

-- Prices added by operators over REST, applied in id order on top of the configured catalog.
CREATE TABLE price_entry (
    id                  bigserial   PRIMARY KEY,
    gpu_model           text        NOT NULL,
    capacity_type       text        NOT NULL CHECK (capacity_type IN ('ON_DEMAND', 'SPOT', 'RESERVED')),
    effective_from      timestamptz NOT NULL,
    micros_per_gpu_hour bigint      NOT NULL CHECK (micros_per_gpu_hour >= 0),
    note                text,
    created_at          timestamptz NOT NULL DEFAULT now()
);
