package dev.gpucloud.scheduler.service.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The scheduler service's settings, under {@code gpucloud.scheduler}. */
@ConfigMapping(prefix = "gpucloud.scheduler")
public interface SchedulerConfig {

    /**
     * This instance's name in leader election: unique per instance, and stable across its restarts (a
     * restarted leader takes its own lease back at once instead of waiting for it to expire).
     */
    @WithDefault("scheduler-0")
    String instanceId();

    /** The gRPC address (host:port) other processes reach this instance at; a standby names the leader's. */
    Optional<String> advertisedAddress();

    /**
     * How long the leader's lease lasts without renewal: after a leader dies, a standby takes over within
     * this (plus a tick). A leader that shuts down gives the lease back at once.
     */
    @WithDefault("3s")
    Duration leaderLease();

    /** How often the leader renews its lease and a standby tries to take it. */
    @WithDefault("500ms")
    Duration leaderTick();

    /** The consumer group the leader reads allocation.events, job.requests and node.events in. */
    @WithDefault("scheduler-service")
    String inputsGroup();

    /** The static member name (group.instance.id) every leader reads its inputs under. */
    @WithDefault("scheduler-leader")
    String inputsMember();

    /** Where the leader's inputs start in a group with no committed offsets (earliest or latest). */
    @WithDefault("earliest")
    String inputsOffsetReset();

    /** The ce_source of every record this service publishes. */
    @WithDefault("scheduler-service")
    String source();

    /** The longest one operation (and its transaction) may take before the next one is let through. */
    @WithDefault("30s")
    Duration operationTimeout();

    /** How often leftover outbox records (e.g. after a broker outage) are retried. */
    @WithDefault("2s")
    Duration outboxRetryInterval();

    /** How often pending jobs are tried again even when nothing changed (e.g. after a missed event). */
    @WithDefault("10s")
    Duration rescheduleInterval();

    /**
     * How often a turn sweeps the fleet (hosts silent past their timeout, what agents report against what the
     * scheduler holds, checkpoint deadlines) before its pass: each sweep visits every host, so at thousands of
     * hosts and hundreds of passes a second it runs on this clock rather than on every pass. Every timeout it
     * serves is tens of seconds; a turn is queued when a sweep falls due even if nothing else asks for one.
     */
    @WithDefault("1s")
    Duration sweepInterval();

    /** A host with no telemetry for this long takes no new work (its agent may be gone). */
    @WithDefault("45s")
    Duration hostTimeout();

    /** ListJobs page size when the caller gives none. */
    @WithDefault("50")
    int defaultPageSize();

    /** The largest ListJobs page a caller may ask for. */
    @WithDefault("500")
    int maxPageSize();

    /**
     * The secret ListJobs page tokens are authenticated with (HMAC-SHA256 of a key derived from it). Unset,
     * each process draws a random key: tokens then do not survive a restart or a failover. Set the same
     * secret on every instance for tokens that do.
     */
    Optional<String> pageTokenSecret();

    /**
     * The file of keys that jobs' secret variables are sealed with before PostgreSQL stores them (SecretSeal: one
     * base64 32-byte key a line, the first seals, all open). Unset, they are stored in the clear, with a warning
     * at start. {@code ./gpucloud up} makes one per run folder.
     */
    Optional<String> secretsKeyFile();

    /** Where workers write checkpoints when the job's policy names no location. */
    @WithDefault("/var/lib/gpucloud/checkpoints")
    String defaultCheckpointRoot();

    /**
     * A host silent this long (no telemetry, no inventory) is lost: its allocations fail and their
     * jobs resume elsewhere from their checkpoints. Longer than {@link #hostTimeout()}, which only
     * stops new work landing there.
     */
    @WithDefault("90s")
    Duration hostLostTimeout();

    /**
     * How long an agent may report an allocation this scheduler does not run before it is stopped, and
     * how long one of the scheduler's started allocations may be missing from its host's reports before
     * the agent is asked how it ended. Covers reports and allocation events that cross on the way.
     */
    @WithDefault("30s")
    Duration reconcileGrace();

    /**
     * Readiness goes DOWN when no scheduling pass has completed for this long while jobs wait (passes
     * run at least every reschedule interval, so this means they fail or hang).
     */
    @WithDefault("60s")
    Duration passStallAfter();

    /** How long a preempted job has to save its checkpoint before it is stopped anyway. */
    @WithDefault("60s")
    Duration preemptionGrace();

    /** How often the leader looks for placed jobs past their time limit; a job may run this much over it. */
    @WithDefault("5s")
    Duration timeLimitSweep();

    /**
     * How long a job at its time limit has to save its last checkpoint before it is stopped anyway (unset: the
     * {@code preemption-grace}).
     */
    Optional<Duration> timeLimitGrace();

    /** Checkpoint deadline for a spot interruption notice that carries none (AWS gives 2 minutes). */
    @WithDefault("120s")
    Duration spotNotice();

    /** Interruptions after which a spot job runs on on-demand. */
    @WithDefault("3")
    int spotMaxInterruptions();

    /** How long a reclaimed spot pool (zone and instance type) is avoided. */
    @WithDefault("30m")
    Duration spotPoolAvoidance();

    /**
     * The most submissions accepted in one transaction. Submissions that arrive while the scheduler is
     * busy wait and are then accepted together (group commit); 1 accepts each alone.
     */
    @WithDefault("500")
    int submitBatch();

    /** Failed exits a job is retried after (exit codes 2, 126 and 127 never are). */
    @WithDefault("3")
    int maxRetries();

    /** Runtime backfill assumes for a job that gives no estimate. */
    @WithDefault("24h")
    Duration defaultRuntimeEstimate();

    /** A new critical XID keeps new work off a host this long. */
    @WithDefault("1h")
    Duration xidQuarantine();

    /** How many feasible hosts a single-host decision scores (visited fullest first). */
    @WithDefault("32")
    int feasibleHostsToScore();

    /**
     * Tenants allowed to submit (an entry ending in '*' is a prefix, e.g. "team-*"); unset allows any
     * well-formed tenant id. Others are refused with PERMISSION_DENIED.
     */
    Optional<List<String>> tenants();

    /**
     * GPU quotas per tenant as "soft/hard" in GPUs (0 = none), e.g. gpucloud.scheduler.quota.team-a=16/32.
     * Above the hard quota a submission is refused; above the soft one jobs wait behind other tenants'.
     */
    Map<String, String> quota();

    /** The quota of tenants not named in {@link #quota()}. */
    @WithDefault("0/0")
    String defaultQuota();

    /**
     * Least attained service within a priority class (scheduler-core's {@code Las}): a tenant's jobs of one
     * class queue by the GPU-seconds they have received, fewer GPUs first; a job that saves checkpoints
     * yields its GPUs to a less-served one of its class once it has run {@code min-run}; a job that waited
     * {@code starve-factor} times its run time (and {@code starve-after} at least) goes first.
     */
    Las las();

    interface Las {
        /** Off: place in line within a class and tenant, and no preemption within a class. */
        @WithDefault("true")
        boolean enabled();

        /** The first limit of service, in GPU-seconds; each next one is {@code factor} times the last. */
        @WithDefault("600")
        double firstLimitGpuSeconds();

        @WithDefault("2")
        double factor();

        @WithDefault("40")
        int levels();

        @WithDefault("10m")
        Duration minRun();

        @WithDefault("8")
        double starveFactor();

        @WithDefault("6h")
        Duration starveAfter();
    }
}
