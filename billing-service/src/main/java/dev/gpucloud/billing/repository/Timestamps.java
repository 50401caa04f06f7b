package dev.gpucloud.billing.repository;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/** PostgreSQL timestamptz values travel as OffsetDateTime in UTC. */
final class Timestamps {
    private Timestamps() {
    }

    static OffsetDateTime utc(Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }
}
