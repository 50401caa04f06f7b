package dev.gpucloud.scheduler.sim.engine;

import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * The discrete-event loop: a virtual clock in milliseconds, a priority queue of events (completion,
 * policy tick, spot notice, spot reclaim, host replaced; arrivals come from the submit-ordered job
 * list), no threads. At each distinct event time the engine applies every event of that time, then
 * asks the policy once for its plan and applies it. Ties are broken by insertion order, so a run is
 * deterministic for its inputs and {@link SimConfig#seed()}.
 *
 * <p>Progress: a running job makes one millisecond of progress per millisecond once its restore time
 * is over; it completes when its remaining work reaches zero. A spot reclaim rolls the jobs on the host
 * back to their last periodic checkpoint (progress since it is lost work).
 */
public final class Simulator {

    /** Called every so many events with progress, for a progress bar. */
    public interface Progress {
        void update(int doneJobs, int totalJobs, long nowMillis);
    }

    private static final int COMPLETE = 0;
    private static final int TICK = 1;
    private static final int SPOT_NOTICE = 2;
    private static final int SPOT_RECLAIM = 3;
    private static final int HOST_BACK = 4;

    private record Event(long time, long seq, int type, SimJob job, int host, int epoch) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Long.compare(time, o.time);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    final SimCluster cluster;
    final ArrayList<SimJob> active = new ArrayList<>();
    final ArrayList<SimJob> running = new ArrayList<>();
    long now;

    private final Policy policy;
    private final SimConfig config;
    private final SimJob[] jobs;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final Decisions decisions;
    private final SplittableRandom random;
    private long seq;
    private int tickEpoch;
    private long eventCount;
    private int done;
    private double[] utilization = new double[64];
    private long lastUtilizationTime;
    private final long[] hostDownSince;
    private final long[] hostDownMillis;
    private double busyCostMicros;
    private long spotInterruptions;
    private long decisionsMade;

    public Simulator(List<TraceJob> trace, SimCluster cluster, Policy policy, SimConfig config) {
        this.cluster = cluster;
        this.policy = policy;
        this.config = config;
        this.jobs = new SimJob[trace.size()];
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < trace.size(); i++) {
            TraceJob t = trace.get(i);
            if (t.submitMillis() < previous) {
                throw new IllegalArgumentException("jobs must be in submit order: job " + t.id() + " at line "
                        + (i + 1) + " is submitted before the job ahead of it");
            }
            previous = t.submitMillis();
            if (!fitsEmpty(t.gpus())) {
                throw new IllegalArgumentException("job " + t.id() + " needs " + t.gpus() + " GPUs; cluster "
                        + cluster.name + " can never hold it (" + cluster.totalGpus + " GPUs, at most "
                        + cluster.maxHostGpus + " per host)");
            }
            jobs[i] = new SimJob(i, t);
        }
        this.decisions = new Decisions(this);
        this.random = new SplittableRandom(config.seed());
        this.hostDownSince = new long[cluster.hostCount()];
        this.hostDownMillis = new long[cluster.hostCount()];
        cluster.reset();
    }

    private boolean fitsEmpty(int gpus) {
        if (gpus <= cluster.maxHostGpus) {
            return true;
        }
        int whole = 0;
        for (int h = 0; h < cluster.hostCount(); h++) {
            if (cluster.gpus[h] == cluster.maxHostGpus) {
                whole += cluster.gpus[h];
            }
        }
        return whole >= gpus;
    }

    public SimResult run() {
        return run(null, 0);
    }

    /** Runs to the end; {@code progress} (may be null) is told every {@code every} events. */
    public SimResult run(Progress progress, int every) {
        long started = System.nanoTime();
        for (int h = 0; h < cluster.hostCount(); h++) {
            if (cluster.spot[h]) {
                scheduleNextInterruption(h, 0);
            }
        }
        int next = 0;
        while (done < jobs.length) {
            long t = Long.MAX_VALUE;
            if (next < jobs.length) {
                t = jobs[next].submitMillis();
            }
            Event head = events.peek();
            if (head != null && head.time < t) {
                t = head.time;
            }
            if (t == Long.MAX_VALUE) {
                throw new IllegalStateException("no event left at " + now + " ms but " + (jobs.length - done)
                        + " jobs are unfinished (policy " + policy.name() + " leaves them queued)");
            }
            advance(t);
            while (next < jobs.length && jobs[next].submitMillis() == t) {
                arrive(jobs[next++]);
                eventCount++;
            }
            while (!events.isEmpty() && events.peek().time == t) {
                handle(events.poll());
                eventCount++;
            }
            if (!active.isEmpty()) {
                decide();
            }
            if (progress != null && every > 0 && eventCount % every == 0) {
                progress.update(done, jobs.length, now);
            }
        }
        advance(now);
        if (progress != null) {
            progress.update(done, jobs.length, now);
        }
        long makespan = 0;
        for (SimJob j : jobs) {
            makespan = Math.max(makespan, j.finishMillis);
        }
        double fleetCost = 0;
        double onDemandFleetCost = 0;
        for (int h = 0; h < cluster.hostCount(); h++) {
            long down = hostDownMillis[h] + (cluster.down[h] ? Math.max(0, makespan - hostDownSince[h]) : 0);
            fleetCost += cluster.priceMicrosPerHour[h] * (Math.max(0, makespan - down) / 3_600_000.0);
            onDemandFleetCost += cluster.onDemandPriceMicrosPerHour[h] * (makespan / 3_600_000.0);
        }
        int buckets = (int) Math.min(utilization.length, makespan / config.utilizationBucketMillis() + 1);
        return new SimResult(policy.name(), cluster.name, List.of(jobs), makespan, cluster.totalGpus,
                config.utilizationBucketMillis(), Arrays.copyOf(utilization, buckets), fleetCost, onDemandFleetCost,
                busyCostMicros, spotInterruptions, eventCount, decisionsMade, System.nanoTime() - started);
    }

    // --- time ---

    private void advance(long t) {
        if (t < now) {
            throw new IllegalStateException("time went back from " + now + " to " + t);
        }
        for (int i = 0, n = running.size(); i < n; i++) {
            sync(running.get(i), t);
        }
        int used = cluster.usedGpus();
        if (used > 0 && t > lastUtilizationTime) {
            addUtilization(lastUtilizationTime, t, used);
        }
        lastUtilizationTime = t;
        now = t;
    }

    private void sync(SimJob j, long t) {
        long from = j.lastSyncMillis;
        if (t <= from) {
            return;
        }
        long progressFrom = Math.max(from, j.resumeAtMillis);
        int allocated = 0;
        for (int i = 0; i < j.hosts.length; i++) {
            int h = j.hosts[i];
            allocated += j.perHost[i];
            busyCostMicros += j.perHost[i] * (t - from) / 3_600_000.0 * cluster.priceMicrosPerHour[h] / cluster.gpus[h];
        }
        j.allocatedGpuMillis += allocated * (t - from);
        if (t > progressFrom) {
            long p = Math.min(t - progressFrom, j.remainingMillis);
            j.remainingMillis -= p;
            j.attainedMillis += p;
            j.segmentProgressMillis += p;
        }
        long overheadEnd = Math.min(t, j.resumeAtMillis);
        if (overheadEnd > from) {
            j.overheadGpuMillis += (overheadEnd - from) * j.gpus();
        }
        j.lastSyncMillis = t;
    }

    private void addUtilization(long from, long to, int used) {
        long w = config.utilizationBucketMillis();
        long t = from;
        while (t < to) {
            int b = (int) Math.min(Integer.MAX_VALUE - 8, t / w);
            long end = Math.min(to, (b + 1L) * w);
            if (b >= utilization.length) {
                utilization = Arrays.copyOf(utilization, Math.max(b + 1, utilization.length * 2));
            }
            utilization[b] += used * (double) (end - t);
            t = end;
        }
    }

    // --- events ---

    private void push(long time, int type, SimJob job, int host, int epoch) {
        events.add(new Event(time, seq++, type, job, host, epoch));
    }

    private void arrive(SimJob j) {
        j.state = SimJob.State.QUEUED;
        j.queuedSinceMillis = now;
        j.activePos = active.size();
        active.add(j);
    }

    private void handle(Event e) {
        switch (e.type) {
            case COMPLETE -> {
                SimJob j = e.job;
                if (j.epoch == e.epoch && j.state == SimJob.State.RUNNING) {
                    if (j.remainingMillis != 0) {
                        throw new IllegalStateException(j + " completes with " + j.remainingMillis + " ms left");
                    }
                    release(j);
                    j.state = SimJob.State.DONE;
                    j.finishMillis = now;
                    removeActive(j);
                    done++;
                    policy.completed(j);
                }
            }
            case TICK -> {
                // nothing to apply: the decision that follows is the point
            }
            case SPOT_NOTICE -> {
                if (!cluster.down[e.host]) {
                    cluster.draining[e.host] = true;
                    push(now + config.spotNoticeMillis(), SPOT_RECLAIM, null, e.host, 0);
                }
            }
            case SPOT_RECLAIM -> reclaim(e.host);
            case HOST_BACK -> {
                cluster.down[e.host] = false;
                hostDownMillis[e.host] += now - hostDownSince[e.host];
                scheduleNextInterruption(e.host, now);
            }
            default -> throw new IllegalStateException("unknown event " + e.type);
        }
    }

    private void scheduleNextInterruption(int host, long from) {
        double rate = config.spotInterruptionsPerHostHour();
        if (rate <= 0) {
            return;
        }
        double hours = -Math.log(1 - random.nextDouble()) / rate;
        push(from + Math.max(1, Math.round(hours * 3_600_000)), SPOT_NOTICE, null, host, 0);
    }

    private void reclaim(int host) {
        spotInterruptions++;
        for (int i = running.size() - 1; i >= 0; i--) {
            SimJob j = running.get(i);
            boolean onHost = false;
            for (int h : j.hosts) {
                onHost |= h == host;
            }
            if (!onHost) {
                continue;
            }
            long interval = config.checkpointIntervalMillis();
            long lost = interval > 0 ? j.segmentProgressMillis % interval : j.segmentProgressMillis;
            j.remainingMillis += lost;
            j.attainedMillis -= lost;
            j.lostGpuMillis += lost * j.gpus();
            j.interruptions++;
            stop(j);
            j.pendingOverheadMillis = config.restoreMillis();
        }
        cluster.draining[host] = false;
        cluster.down[host] = true;
        hostDownSince[host] = now;
        push(now + config.spotReplaceMillis(), HOST_BACK, null, host, 0);
    }

    // --- decisions ---

    private void decide() {
        decisions.stamp++;
        decisions.planned.clear();
        policy.schedule(decisions);
        decisionsMade++;
        for (int i = 0, n = active.size(); i < n; i++) {
            active.get(i).activePos = i;
        }
        int stamp = decisions.stamp;
        // 1. preempt running jobs that are not kept where they are
        for (int i = running.size() - 1; i >= 0; i--) {
            SimJob j = running.get(i);
            if (j.planStamp != stamp || j.planHosts != null) {
                j.preemptions++;
                stop(j);
                j.pendingOverheadMillis = config.checkpointMillis() + config.restoreMillis();
            }
        }
        // 2. start what is assigned
        for (SimJob j : decisions.planned) {
            if (j.planHosts != null) {
                start(j, j.planHosts, j.planPerHost);
            }
        }
        long tick = policy.nextTick(decisions);
        if (tick != Long.MAX_VALUE) {
            if (tick <= now) {
                throw new IllegalStateException("policy " + policy.name() + " asked for a tick at " + tick
                        + " ms, not after now (" + now + ")");
            }
            push(tick, TICK, null, -1, ++tickEpoch);
        }
    }

    private void start(SimJob j, int[] hosts, int[] perHost) {
        for (int i = 0; i < hosts.length; i++) {
            int h = hosts[i];
            if (!cluster.placeable(h) || cluster.used[h] + perHost[i] > cluster.gpus[h]) {
                throw new IllegalStateException("policy " + policy.name() + " placed " + j + " on host "
                        + cluster.ids[h] + " with " + (cluster.gpus[h] - cluster.used[h]) + " GPUs free"
                        + (cluster.placeable(h) ? "" : " (down or draining)") + ", needs " + perHost[i]);
            }
        }
        for (int i = 0; i < hosts.length; i++) {
            cluster.used[hosts[i]] += perHost[i];
        }
        j.hosts = hosts.clone();
        j.perHost = perHost.clone();
        j.state = SimJob.State.RUNNING;
        if (j.firstStartMillis < 0) {
            j.firstStartMillis = now;
        }
        j.resumeAtMillis = now + j.pendingOverheadMillis;
        j.pendingOverheadMillis = 0;
        j.lastSyncMillis = now;
        j.segmentProgressMillis = 0;
        j.epoch++;
        j.runningPos = running.size();
        running.add(j);
        push(j.resumeAtMillis + j.remainingMillis, COMPLETE, j, -1, j.epoch);
    }

    /** Takes a running job off its hosts and back to the queue. */
    private void stop(SimJob j) {
        release(j);
        j.state = SimJob.State.QUEUED;
        j.queuedSinceMillis = now;
        j.epoch++;
    }

    private void release(SimJob j) {
        for (int i = 0; i < j.hosts.length; i++) {
            cluster.used[j.hosts[i]] -= j.perHost[i];
        }
        j.hosts = new int[0];
        j.perHost = new int[0];
        int pos = j.runningPos;
        SimJob last = running.remove(running.size() - 1);
        if (last != j) {
            running.set(pos, last);
            last.runningPos = pos;
        }
        j.runningPos = -1;
    }

    private void removeActive(SimJob j) {
        int pos = j.activePos;
        SimJob last = active.remove(active.size() - 1);
        if (last != j) {
            active.set(pos, last);
            last.activePos = pos;
        }
        j.activePos = -1;
    }
}
