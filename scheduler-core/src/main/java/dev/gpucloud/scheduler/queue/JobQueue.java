package dev.gpucloud.scheduler.queue;

import dev.gpucloud.contracts.events.PriorityClass;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The pending jobs: priority classes (HIGH before NORMAL before LOW), FIFO within a tenant and
 * class, and across tenants fair share by dominant share (the larger of a tenant's GPU and CPU
 * shares of the cluster, divided by its weight; DRF). Per-tenant quotas: a hard cap refuses at
 * submit, a soft one sends the job behind every tenant still within its own. Within a tenant and
 * class, {@link Las} (when set) orders by service received, then fewer GPUs first, then place in line,
 * with starving jobs first. Not thread-safe.
 */
public final class JobQueue {

    private final Map<PriorityClass, Map<String, ArrayDeque<QueuedJob>>> pending = new EnumMap<>(PriorityClass.class);
    private final Map<String, QueuedJob> byId = new HashMap<>();
    private final Map<String, TenantQuota> quotas = new HashMap<>();
    private final Map<String, long[]> running = new HashMap<>();
    private final Map<String, Long> queuedMilli = new HashMap<>();
    private TenantQuota defaultQuota = TenantQuota.UNLIMITED;
    private Las las = Las.OFF;
    private long clusterMilli = 1;
    private long clusterCpu = 1;
    private long nextSeq;

    public JobQueue() {
        for (PriorityClass p : PriorityClass.values()) {
            pending.put(p, new TreeMap<>());
        }
    }

    public void setQuota(String tenant, TenantQuota quota) {
        quotas.put(tenant, quota);
    }

    public void setDefaultQuota(TenantQuota quota) {
        defaultQuota = quota;
    }

    /** The order within a tenant and class ({@link Las#OFF}: place in line). */
    public void setLas(Las value) {
        las = value == null ? Las.OFF : value;
    }

    public Las las() {
        return las;
    }

    public TenantQuota quota(String tenant) {
        return quotas.getOrDefault(tenant, defaultQuota);
    }

    /** The cluster's size, for dominant shares. */
    public void setClusterCapacity(long gpuMilli, long cpuMillis) {
        clusterMilli = Math.max(1, gpuMilli);
        clusterCpu = Math.max(1, cpuMillis);
    }

    /** The next place in line. */
    public long nextSeq() {
        return nextSeq++;
    }

    /** Null when the tenant may submit this job, else why not (the hard quota). */
    public String refusal(String tenant, long gpuMilli) {
        return refusal(tenant, gpuMilli, 0);
    }

    /**
     * As {@link #refusal(String, long)}, counting {@code admittedMilli} more for the tenant: jobs it
     * had admitted but not yet enqueued (a group of submissions accepted together).
     */
    public String refusal(String tenant, long gpuMilli, long admittedMilli) {
        TenantQuota q = quota(tenant);
        if (q.hardMilli() == 0) {
            return null;
        }
        long held = runningMilli(tenant) + queuedMilli.getOrDefault(tenant, 0L) + admittedMilli;
        if (held + gpuMilli > q.hardMilli()) {
            return "tenant " + tenant + " would exceed its hard GPU quota: " + gpus(q.hardMilli()) + " GPUs, "
                    + gpus(held) + " running or queued, this job asks " + gpus(gpuMilli);
        }
        return null;
    }

    private static String gpus(long milli) {
        return milli % 1000 == 0 ? Long.toString(milli / 1000) : String.format(java.util.Locale.ROOT, "%.3f", milli / 1000.0);
    }

    /** Adds a job (new, restored or requeued; its seq keeps its place). Adding it twice does nothing. */
    public void enqueue(QueuedJob job) {
        if (byId.containsKey(job.jobId())) {
            return;
        }
        nextSeq = Math.max(nextSeq, job.seq() + 1);
        ArrayDeque<QueuedJob> line = pending.get(job.priority()).computeIfAbsent(job.tenant(), k -> new ArrayDeque<>());
        if (line.isEmpty() || line.peekLast().seq() < job.seq()) {
            line.addLast(job);
        } else {
            List<QueuedJob> all = new ArrayList<>(line);
            all.add(job);
            all.sort(java.util.Comparator.comparingLong(QueuedJob::seq));
            line.clear();
            line.addAll(all);
        }
        byId.put(job.jobId(), job);
        queuedMilli.merge(job.tenant(), job.gpuMilli(), Long::sum);
    }

    /** Takes a job out of the queue (placed or cancelled). */
    public Optional<QueuedJob> remove(String jobId) {
        QueuedJob job = byId.remove(jobId);
        if (job == null) {
            return Optional.empty();
        }
        ArrayDeque<QueuedJob> line = pending.get(job.priority()).get(job.tenant());
        line.remove(job);
        if (line.isEmpty()) {
            pending.get(job.priority()).remove(job.tenant());
        }
        queuedMilli.merge(job.tenant(), -job.gpuMilli(), Long::sum);
        return Optional.of(job);
    }

    /** Replaces a queued job's entry (e.g. its request moved to on-demand), keeping its place. */
    public void update(QueuedJob job) {
        if (remove(job.jobId()).isPresent()) {
            enqueue(job);
        }
    }

    public Optional<QueuedJob> get(String jobId) {
        return Optional.ofNullable(byId.get(jobId));
    }

    public int size() {
        return byId.size();
    }

    public Collection<QueuedJob> jobs() {
        return byId.values();
    }

    /** A tenant's job started holding resources. */
    public void charge(String tenant, long gpuMilli, long cpuMillis) {
        long[] r = running.computeIfAbsent(tenant, k -> new long[2]);
        r[0] += gpuMilli;
        r[1] += cpuMillis;
    }

    /** A tenant's job stopped holding resources. */
    public void release(String tenant, long gpuMilli, long cpuMillis) {
        long[] r = running.computeIfAbsent(tenant, k -> new long[2]);
        r[0] = Math.max(0, r[0] - gpuMilli);
        r[1] = Math.max(0, r[1] - cpuMillis);
    }

    public long runningMilli(String tenant) {
        long[] r = running.get(tenant);
        return r == null ? 0 : r[0];
    }

    /** A tenant's dominant share, weighted: max(GPU share, CPU share) / weight. */
    public double dominantShare(String tenant) {
        long[] r = running.getOrDefault(tenant, new long[2]);
        return share(r[0], r[1], quota(tenant).weight());
    }

    private double share(long milli, long cpu, int weight) {
        return Math.max((double) milli / clusterMilli, (double) cpu / clusterCpu) / weight;
    }

    /** {@link #order(long)} now. */
    public List<QueuedJob> order() {
        return order(System.currentTimeMillis());
    }

    /**
     * The order a scheduling pass tries jobs in at {@code nowMillis}: class by class; within a class,
     * first the jobs that keep their tenant within its soft quota, then the others; within each group,
     * the next job of the tenant with the smallest dominant share, counting what this order already gave
     * it; a tenant's jobs in place-in-line order, or {@link Las}'s.
     */
    public List<QueuedJob> order(long nowMillis) {
        List<QueuedJob> out = new ArrayList<>(byId.size());
        Map<String, long[]> given = new HashMap<>();
        for (PriorityClass p : new PriorityClass[] {PriorityClass.HIGH, PriorityClass.NORMAL, PriorityClass.LOW}) {
            Map<String, ArrayDeque<QueuedJob>> lines = pending.get(p);
            if (lines.isEmpty()) {
                continue;
            }
            List<QueuedJob> over = new ArrayList<>();
            Map<String, Iterator<QueuedJob>> cursors = new TreeMap<>();
            Map<String, QueuedJob> heads = new TreeMap<>();
            for (var e : lines.entrySet()) {
                Iterator<QueuedJob> it = las.enabled() ? lasOrder(e.getValue(), nowMillis).iterator()
                        : e.getValue().iterator();
                cursors.put(e.getKey(), it);
                heads.put(e.getKey(), it.next());
            }
            while (!heads.isEmpty()) {
                String pick = null;
                double best = Double.MAX_VALUE;
                for (var e : heads.entrySet()) {
                    String t = e.getKey();
                    long[] g = given.computeIfAbsent(t, k -> running.getOrDefault(k, new long[2]).clone());
                    double s = share(g[0], g[1], quota(t).weight());
                    if (s < best || (s == best && e.getValue().seq() < heads.get(pick).seq())) {
                        best = s;
                        pick = t;
                    }
                }
                QueuedJob job = heads.get(pick);
                long[] g = given.get(pick);
                TenantQuota q = quota(pick);
                if (q.softMilli() > 0 && g[0] + job.gpuMilli() > q.softMilli()) {
                    over.add(job);
                } else {
                    out.add(job);
                    g[0] += job.gpuMilli();
                    g[1] += job.cpuMillis();
                }
                Iterator<QueuedJob> it = cursors.get(pick);
                if (it.hasNext()) {
                    heads.put(pick, it.next());
                } else {
                    heads.remove(pick);
                }
            }
            out.addAll(over);
        }
        return out;
    }

    /**
     * A tenant's line by level now, then fewer GPUs, then place in line; the starving first, longest
     * waiting first (a big gang is what starves; fewer-GPUs-first among them would keep it starving).
     */
    private List<QueuedJob> lasOrder(ArrayDeque<QueuedJob> line, long nowMillis) {
        List<QueuedJob> sorted = new ArrayList<>(line);
        Map<QueuedJob, Integer> levels = new java.util.IdentityHashMap<>();
        for (QueuedJob j : sorted) {
            levels.put(j, las.level(j, nowMillis));
        }
        sorted.sort(java.util.Comparator.<QueuedJob>comparingInt(levels::get)
                .thenComparingLong(j -> levels.get(j) < 0 ? j.queuedSinceMillis() : j.gpuMilli())
                .thenComparingLong(QueuedJob::seq));
        return sorted;
    }

    /** True when the job would take its tenant past its soft quota. */
    public boolean overSoftQuota(QueuedJob job) {
        TenantQuota q = quota(job.tenant());
        return q.softMilli() > 0 && runningMilli(job.tenant()) + job.gpuMilli() > q.softMilli();
    }
}
