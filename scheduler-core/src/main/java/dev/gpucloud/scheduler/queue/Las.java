package dev.gpucloud.scheduler.queue;

/**
 * Least attained service within a priority class, told no job's duration: a job's service is the
 * GPU-seconds it has received over all its attempts (time run x GPUs), and its level is how many of
 * the geometric limits {@code firstLimit x factor^k} (k = 0 .. levels - 2) that service has passed.
 * Within a class and tenant, jobs queue by level, then fewer GPUs first (with equal service, the job on
 * fewer GPUs has the smaller expected remaining service), then by their place in line. Run times on
 * shared GPU clusters are heavy-tailed: a job that has run long is likely to run much longer, so
 * ranking by service received approximates shortest-remaining-first without knowing any duration.
 *
 * <p>A queued job that has received service may preempt a running job of its class that has passed
 * more limits than it has, where that job yields (it resumes from a checkpoint) and has run at least
 * {@code minRunMillis} in its current attempt (so two jobs never trade GPUs back and forth faster than
 * that). The starvation guard: a job that has waited at least {@code max(starveAfterMillis, starveFactor
 * x its run time so far)} since it last queued ranks first in its class, as if it had received nothing.
 *
 * <p>{@link #OFF}: one level, so the order is the place in line, no same-class preemption (the service's
 * behaviour before this policy, and what a fleet without checkpoints gets).
 */
public record Las(double firstLimitGpuSeconds, double factor, int levels, long minRunMillis, double starveFactor,
        long starveAfterMillis) {

    /** No service ordering: FIFO within a class and tenant, as before. */
    public static final Las OFF = new Las(1, 2, 1, 0, 0, Long.MAX_VALUE);

    /**
     * The defaults: limits from 10 GPU-minutes doubling over 40 levels, at least 10 minutes of run before
     * a job yields to a less-served one, and a job is promoted once it has waited 8 times its run time
     * (and at least 6 hours). Why these: docs/results.md, section 1.
     */
    public static final Las DEFAULT = new Las(600, 2, 40, 600_000, 8, 6 * 3_600_000L);

    public Las {
        if (!(firstLimitGpuSeconds > 0) || !(factor > 1) || levels < 1 || minRunMillis < 0 || starveFactor < 0
                || starveAfterMillis < 0) {
            throw new IllegalArgumentException("LAS needs a first limit > 0, a factor > 1, at least one level and"
                    + " non-negative guards: " + firstLimitGpuSeconds + ", " + factor + ", " + levels + ", "
                    + minRunMillis + ", " + starveFactor + ", " + starveAfterMillis);
        }
    }

    public boolean enabled() {
        return levels > 1;
    }

    /** How many limits {@code gpuSeconds} of service has passed: 0 .. levels - 1. */
    public int level(double gpuSeconds) {
        int level = 0;
        double limit = firstLimitGpuSeconds;
        while (level < levels - 1 && gpuSeconds >= limit) {
            level++;
            limit *= factor;
        }
        return level;
    }

    /** A queued job's rank level now: -1 when it starves, else its service's level. */
    public int level(QueuedJob job, long nowMillis) {
        if (!enabled()) {
            return 0;
        }
        return starving(job, nowMillis) ? -1 : level(job.attainedGpuSeconds());
    }

    /** Whether a queued job has waited past its starvation limit. */
    public boolean starving(QueuedJob job, long nowMillis) {
        return nowMillis >= starvesAtMillis(job);
    }

    /**
     * When a queued job starts to starve (epoch ms): max(starveAfter, starveFactor x its run time so far)
     * after it last queued; Long.MAX_VALUE when off.
     */
    public long starvesAtMillis(QueuedJob job) {
        if (!enabled() || starveAfterMillis == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        double gpus = Math.max(0.001, job.gpuMilli() / 1000.0);
        double ranMillis = job.attainedGpuSeconds() / gpus * 1000;
        double wait = Math.max(starveAfterMillis, starveFactor * ranMillis);
        // whole milliseconds before adding: an epoch time plus a fraction loses the fraction in a double
        long whole = wait >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(wait);
        long since = job.queuedSinceMillis();
        return since > 0 && whole > Long.MAX_VALUE - since ? Long.MAX_VALUE : since + whole;
    }

    /** A running job's level now, counting the service of its current attempt. */
    public int level(RunningJob job, long nowMillis) {
        return level(job.attainedAt(nowMillis));
    }

    /**
     * Whether queued {@code job} may preempt running {@code victim} of its class: the victim yields, has
     * run long enough in this attempt, and has passed more limits than the job ranks at.
     */
    public boolean mayPreempt(QueuedJob job, RunningJob victim, long nowMillis) {
        return enabled() && victim.yields() && victim.priority() == job.priority()
                && nowMillis - victim.startedAtMillis() >= minRunMillis
                && level(victim, nowMillis) > level(job, nowMillis);
    }

    /**
     * When the running job next passes a limit (epoch ms), Long.MAX_VALUE when it is at the last level: a
     * pass is worth running then, since it may now yield to a queued job.
     */
    public long nextLevelAt(RunningJob job, long nowMillis) {
        if (!enabled() || job.gpuMilli() <= 0) {
            return Long.MAX_VALUE;
        }
        double service = job.attainedAt(nowMillis);
        int level = level(service);
        if (level >= levels - 1) {
            return Long.MAX_VALUE;
        }
        double limit = firstLimitGpuSeconds * Math.pow(factor, level);
        long at = nowMillis + (long) Math.ceil((limit - service) * 1_000_000.0 / job.gpuMilli());
        return Math.max(at, job.startedAtMillis() + minRunMillis);
    }
}
