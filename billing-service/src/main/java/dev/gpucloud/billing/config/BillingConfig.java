package dev.gpucloud.billing.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** How billing-service rates usage; every value can be set in application.properties or the environment. */
@ConfigMapping(prefix = "gpucloud.billing")
public interface BillingConfig {

    /** Each allocation is billed at least this many seconds (AWS bills per second with a 60-second minimum). */
    @WithDefault("60")
    long minimumBillableSeconds();

    /**
     * Where the price catalog comes from: {@code builtin} for the AWS-derived prices in docs/billing.md, or
     * the path of a file with one {@code MODEL/CAPACITY=MICROS}, {@code MODEL/CAPACITY@2025-07-01=MICROS}
     * (in force from that UTC date or instant) or {@code MODEL/mig-slices=N} entry a line.
     */
    @WithDefault("builtin")
    String catalogLocation();

    /**
     * Entries applied on top of the catalog, comma-separated {@code MODEL/CAPACITY=MICROS} or
     * {@code MODEL/CAPACITY@WHEN=MICROS}; none by default.
     */
    Optional<String> catalogOverrides();

    /**
     * How long after a calendar month (UTC) ends its invoices stay OPEN; then they are CLOSED (frozen), and
     * usage for that month that arrives later is an adjustment on the tenant's next open invoice.
     */
    @WithDefault("P3D")
    Duration closeGrace();

    /** How often the service looks for invoices to close. */
    @WithDefault("PT1M")
    Duration closeCheckInterval();

    /**
     * The longest single usage report accepted; a longer one (e.g. a year-long tick from a broken agent) is
     * dead-lettered with the reason, replayable once checked.
     */
    @WithDefault("PT24H")
    Duration maxReportLength();

    /**
     * Reserved commitments, comma-separated {@code TENANT/SKU/FIRST..LAST=HOURS@MICROS} (HOURS SKU-hours a
     * month at MICROS micro-USD per SKU-hour, billed used or not; usage beyond is on-demand); none by default.
     */
    Optional<String> commitments();

    /** How long a failing database is retried for one usage record before that record is dead-lettered. */
    @WithDefault("PT5M")
    Duration databaseRetryWindow();

    /** Cost advisor: jobs whose id matches this regular expression are spot-tolerant (checkpointed training). */
    @WithDefault("(?i).*(train|checkpoint).*")
    String advisorSpotEligibleJobs();

    /** Cost advisor: a model's assumed SPOT price, where the catalog has none, in percent of its on-demand price. */
    @WithDefault("30")
    int advisorSpotPricePercent();

    /** Cost advisor: a model's assumed committed price, where the catalog has no RESERVED one, in percent of on-demand. */
    @WithDefault("60")
    int advisorReservedPricePercent();

    /** Cost advisor: how many months (the advised one included) the commitment level is chosen over. */
    @WithDefault("12")
    int advisorHistoryMonths();

    /** The in-memory fold of usage events and its snapshots (docs/billing.md, "Exactly once"). */
    Fold fold();

    interface Fold {
        /**
         * How often the folded usage and the consumed offsets are written to PostgreSQL, in one transaction;
         * usage is on invoices (and offsets committed) at most this much later than it was consumed.
         */
        @WithDefault("PT1S")
        Duration snapshotInterval();

        /** A snapshot is also written as soon as this many events were folded since the last one. */
        @WithDefault("200000")
        int snapshotEvents();

        /** Above this many allocations known per partition, the clean ones are forgotten after a snapshot. */
        @WithDefault("500000")
        int maxKnownAllocations();
    }

    /** How readiness watches ingestion (docs/runbooks/billing-ingest-stalled.md). */
    Ingest ingest();

    interface Ingest {
        /**
         * Readiness goes DOWN when the consumer lag of usage.events (end offsets minus the offsets billing has
         * stored) has stayed above zero without shrinking for this long: billing is ingesting nothing.
         */
        @WithDefault("PT10M")
        Duration stallAfter();

        /** How often the lag is measured. */
        @WithDefault("PT15S")
        Duration lagSampleInterval();
    }
}
