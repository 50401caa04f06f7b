-- Adjustments that finance books by hand (POST /invoices/{tenant}/adjustments): credits such as SLA credits
-- (negative) and debits, each on one OPEN month's invoice of one tenant, for good. One row per client
-- idempotency key: a retry of the same request finds its row and books nothing; the key with another request is
-- refused. The request's own fields are kept (requested_month: the month the request named, NULL where it let
-- billing choose) so that "the same request" can be told from "another request under the same key".
-- Booking takes this table's SHARE ROW EXCLUSIVE lock and closing an invoice its SHARE lock, so a booking either
-- committed before the close (and is frozen on the invoice) or sees the month closed: never neither.
CREATE TABLE manual_adjustment (
    id               bigserial   PRIMARY KEY,
    idempotency_key  text        NOT NULL UNIQUE CHECK (idempotency_key ~ '^[A-Za-z0-9._:-]{1,128}$'),
    tenant           text        NOT NULL CHECK (tenant ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    month            text        NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
    requested_month  text        CHECK (requested_month ~ '^[0-9]{4}-[0-9]{2}$'),
    amount_micros    bigint      NOT NULL CHECK (amount_micros <> 0
                                                 AND amount_micros BETWEEN -1000000000000 AND 1000000000000),
    reason           text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    booked_by        text        NOT NULL,
    booked_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX manual_adjustment_invoice ON manual_adjustment (tenant, month);

-- A closed invoice freezes its manual adjustments as lines of kind MANUAL (for_month = its own month), each
-- naming its adjustment: at most one line per adjustment, so none is ever billed twice. MANUAL lines are not
-- corrections of a closed month's usage and never enter that arithmetic (kind USAGE and ADJUSTMENT only).
ALTER TABLE invoice_line DROP CONSTRAINT invoice_line_kind_check;
ALTER TABLE invoice_line ADD CONSTRAINT invoice_line_kind_check CHECK (kind IN ('USAGE', 'ADJUSTMENT', 'MANUAL'));
ALTER TABLE invoice_line ADD COLUMN adjustment_id bigint REFERENCES manual_adjustment (id);
ALTER TABLE invoice_line ADD CONSTRAINT invoice_line_manual_has_adjustment
    CHECK ((kind = 'MANUAL') = (adjustment_id IS NOT NULL));
CREATE UNIQUE INDEX invoice_line_adjustment ON invoice_line (adjustment_id) WHERE adjustment_id IS NOT NULL;
