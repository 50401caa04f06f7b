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
     * Micro-USD per GPU-hour for a GPU model the catalog does not list; such lines are flagged on the
     * invoice. Unset, the built-in catalog's default applies (its highest on-demand price).
     */
    Optional<Long> defaultRateMicrosPerGpuHour();

    /**
     * Reserved commitments, comma-separated {@code TENANT/SKU/FIRST..LAST=HOURS@MICROS} (HOURS SKU-hours a
     * month at MICROS micro-USD per SKU-hour, billed used or not; usage beyond is on-demand); none by default.
     */
    Optional<String> commitments();

    /** How long a failing database is retried for one usage record before that record is dead-lettered. */
    @WithDefault("PT5M")
    Duration databaseRetryWindow();
}
