package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.core.Catalog;
import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.TreeSet;

/**
 * A discrete-event run of a job list on one fleet, on a virtual clock: jobs arrive at their submit times, queue in
 * FIFO order (submit time, then trace order) and start first-fit on the first hosts with room (later jobs backfill
 * around a head that does not fit); the fleet scans every scan interval. A job of up to 8 GPUs runs on one host; a
 * larger one needs one host per worker, all in one placement group. A job never runs on spot unless it can be
 * checkpointed. When the cloud reclaims a host its jobs go back to the queue with the work of their last
 * checkpoint; when the autoscaler drains a host its jobs checkpoint first and lose nothing. Every resume costs the
 * resume overhead.
 */
public final class FleetSimulation {

    private final ElasticSettings settings;
    private final Fleet fleet;
    private final FleetJob[] jobs;
    private final TreeSet<FleetJob> queue;
    private final PriorityQueue<Finish> finishes = new PriorityQueue<>(
            Comparator.comparingLong(Finish::at).thenComparing(f -> f.job().id()));
    private final TimeSeries series = new TimeSeries();
    private final long start;
    private long now;
    private long allocatedGpuMillis;
    private int allocatedGpus;
    private int runningJobs;
    private int requeues;
    private double lostGpuMillis;
    private boolean dirty;

    private record Finish(long at, FleetJob job, int epoch) {}

    private FleetSimulation(List<TraceJob> trace, Fleet fleet, ElasticSettings settings) {
        this.settings = settings;
        this.fleet = fleet;
        Map<FleetJob, Integer> order = new LinkedHashMap<>();
        jobs = new FleetJob[trace.size()];
        Random r = new Random(settings.seed());
        for (int i = 0; i < jobs.length; i++) {
            jobs[i] = new FleetJob(trace.get(i), r.nextDouble() >= settings.nonCheckpointable());
            order.put(jobs[i], i);
        }
        Arrays.sort(jobs, Comparator.comparingLong((FleetJob j) -> j.trace.submitMillis())
                .thenComparingInt(order::get));
        Map<FleetJob, Integer> fifo = new LinkedHashMap<>();
        for (int i = 0; i < jobs.length; i++) {
            fifo.put(jobs[i], i);
        }
        queue = new TreeSet<>(Comparator.comparingInt(fifo::get));
        start = jobs.length == 0 ? 0 : jobs[0].trace.submitMillis();
        now = start;
    }

    /** Runs the jobs on the elastic fleet: the autoscaler's core and the simulated provider. */
    public static FleetResult elastic(String window, List<TraceJob> trace, ElasticSettings settings,
            TimeSeries seriesOut) {
        long start = trace.stream().mapToLong(TraceJob::submitMillis).min().orElse(0);
        ElasticFleet f = new ElasticFleet(Catalog.aws(), settings, start);
        return new FleetSimulation(trace, f, settings).run(window, seriesOut);
    }

    /** Runs the jobs on {@code hosts} on-demand p3.16xlarge hosts, up for the whole run. */
    public static FleetResult fixed(String window, String name, List<TraceJob> trace, int hosts,
            ElasticSettings settings, TimeSeries seriesOut) {
        long start = trace.stream().mapToLong(TraceJob::submitMillis).min().orElse(0);
        StaticFleet f = new StaticFleet(name, Catalog.aws().require("p3.16xlarge"),
                hosts, start);
        return new FleetSimulation(trace, f, settings).run(window, seriesOut);
    }

    private FleetResult run(String window, TimeSeries seriesOut) {
        long wall = System.currentTimeMillis();
        long scanMs = settings.scanInterval().toMillis();
        long sampleMs = settings.sampleEvery().toMillis();
        long nextScan = start;
        long nextSample = start;
        long lastChange = start;
        int next = 0;
        int done = 0;
        boolean sampleDue = false;
        double[] jct = new double[jobs.length];
        long lastFinish = start;
        while (done < jobs.length) {
            long tA = next < jobs.length ? jobs[next].trace.submitMillis() : Long.MAX_VALUE;
            long tF = finishes.isEmpty() ? Long.MAX_VALUE : finishes.peek().at();
            long t = Math.min(Math.min(tA, tF), nextScan);
            allocatedGpuMillis += (long) allocatedGpus * (t - now);
            now = t;
            for (Fleet.Lost lost : fleet.reclaimed(t)) {
                requeueLost(lost);
            }
            if (tF == t) {
                while (!finishes.isEmpty() && finishes.peek().at() == t) {
                    Finish f = finishes.poll();
                    if (f.epoch() == f.job().epoch && f.job().running()) {
                        finish(f.job());
                        jct[done++] = (t - f.job().trace.submitMillis()) / 1000.0;
                        lastFinish = t;
                        lastChange = t;
                    }
                }
            } else if (tA == t) {
                while (next < jobs.length && jobs[next].trace.submitMillis() == t) {
                    queue.add(jobs[next++]);
                }
                dirty = true;
                lastChange = t;
            } else {
                fleet.bill(t);
                for (SimHost h : fleet.scan(t, queue)) {
                    for (FleetJob j : new ArrayList<>(h.jobs)) {
                        requeue(j, j.progressAt(t));
                    }
                }
                dirty |= fleet instanceof ElasticFleet;
                if (t >= nextSample) {
                    sampleDue = true;
                    nextSample += sampleMs;
                }
                nextScan += scanMs;
                if (runningJobs == 0 && next == jobs.length && !queue.isEmpty()
                        && t - lastChange > 7L * 24 * 3_600_000) {
                    throw new IllegalStateException(fleet.name() + " fleet: " + queue.size() + " job(s) found no"
                            + " host in a week, first " + queue.first().id() + " (" + queue.first().gpus() + " GPUs)");
                }
            }
            if (dirty) {
                place();
            }
            if (sampleDue) {
                sample(t);
                sampleDue = false;
            }
        }
        fleet.close(lastFinish);
        allocatedGpuMillis += (long) allocatedGpus * (lastFinish - now);
        sample(lastFinish);
        if (seriesOut != null) {
            series.rows().forEach(seriesOut::add);
        }
        Arrays.sort(jct);
        double avg = 0;
        for (double x : jct) {
            avg += x;
        }
        avg = jct.length == 0 ? 0 : avg / jct.length;
        double p99 = jct.length == 0 ? 0 : jct[Math.min(jct.length - 1, (int) (jct.length * 0.99))];
        double paid = fleet.paidGpuMillis() / 3_600_000.0;
        double idle = Math.max(0, paid - allocatedGpuMillis / 3_600_000.0);
        return new FleetResult(window, fleet.name(), jobs.length, fleet.costUsd(), avg, p99,
                (lastFinish - start) / 1000.0, paid, idle, fleet.launches(), fleet.releases(), fleet.interruptions(),
                requeues, lostGpuMillis / 3_600_000.0, fleet.drains(), fleet.spotShortfall(),
                System.currentTimeMillis() - wall);
    }

    private void place() {
        dirty = false;
        int totalFree = 0;
        int maxFree = 0;
        for (SimHost h : fleet.hosts()) {
            if (h.takesWork()) {
                totalFree += h.free;
                maxFree = Math.max(maxFree, h.free);
            }
        }
        Iterator<FleetJob> it = queue.iterator();
        while (it.hasNext() && totalFree > 0) {
            FleetJob j = it.next();
            if (j.gpusPerWorker > maxFree || j.gpus() > totalFree) {
                continue;
            }
            List<SimHost> on = j.workers == 1 ? firstFit(j) : gangFit(j);
            if (on == null) {
                continue;
            }
            it.remove();
            start(j, on);
            totalFree -= j.gpus();
            if (j.gpusPerWorker == maxFree || j.workers > 1) {
                maxFree = 0;
                for (SimHost h : fleet.hosts()) {
                    if (h.takesWork()) {
                        maxFree = Math.max(maxFree, h.free);
                    }
                }
            }
        }
    }

    private static boolean accepts(FleetJob j, SimHost h) {
        return h.takesWork() && h.free >= j.gpusPerWorker && (j.checkpointable || h.capacity != Capacity.SPOT);
    }

    private List<SimHost> firstFit(FleetJob j) {
        for (SimHost h : fleet.hosts()) {
            if (accepts(j, h)) {
                return List.of(h);
            }
        }
        return null;
    }

    private List<SimHost> gangFit(FleetJob j) {
        Map<String, List<SimHost>> byGroup = new LinkedHashMap<>();
        for (SimHost h : fleet.hosts()) {
            if (h.placementGroup != null && accepts(j, h)) {
                List<SimHost> g = byGroup.computeIfAbsent(h.placementGroup, k -> new ArrayList<>());
                g.add(h);
                if (g.size() == j.workers) {
                    return g;
                }
            }
        }
        return null;
    }

    private void start(FleetJob j, List<SimHost> on) {
        j.startedAt = now;
        j.epoch++;
        j.hosts = List.copyOf(on);
        for (SimHost h : on) {
            h.free -= j.gpusPerWorker;
            h.jobs.add(j);
            h.touched(now, settings.lowUtilization());
        }
        allocatedGpus += j.gpus();
        runningJobs++;
        finishes.add(new Finish(j.finishIfStartedAt(now), j, j.epoch));
    }

    private void stop(FleetJob j) {
        for (SimHost h : j.hosts) {
            h.free += j.gpusPerWorker;
            h.jobs.remove(j);
            h.touched(now, settings.lowUtilization());
        }
        j.hosts = List.of();
        j.startedAt = -1;
        allocatedGpus -= j.gpus();
        runningJobs--;
        dirty = true;
    }

    private void finish(FleetJob j) {
        stop(j);
        j.finishedAt = now;
    }

    /** Back to the queue having kept {@code progress} of this run's work. */
    private void requeue(FleetJob j, long progress) {
        stop(j);
        j.savedMillis = Math.min(j.trace.durationMillis() - 1, j.savedMillis + progress);
        j.overheadMillis = settings.resumeOverhead().toMillis();
        j.queuedSince = now;
        j.epoch++;
        j.requeues++;
        requeues++;
        queue.add(j);
    }

    private void requeueLost(Fleet.Lost lost) {
        long ckpt = settings.checkpointInterval().toMillis();
        for (FleetJob j : new ArrayList<>(lost.host().jobs)) {
            long progress = lost.atMillis() > j.startedAt ? j.progressAt(lost.atMillis()) : 0;
            long kept = j.checkpointable ? progress / ckpt * ckpt : 0;
            lostGpuMillis += (double) (progress - kept) * j.gpus();
            requeue(j, kept);
        }
    }

    private void sample(long t) {
        int launching = 0;
        int running = 0;
        int draining = 0;
        int gpus = 0;
        for (SimHost h : fleet.hosts()) {
            gpus += h.gpus;
            if (!h.running) {
                launching++;
            } else if (h.draining) {
                draining++;
            } else {
                running++;
            }
        }
        series.add(new TimeSeries.Row((t - start) / 1000.0, launching, running, draining, queue.size(), runningJobs,
                allocatedGpus, gpus, fleet.spendUsdPerHour(t)));
    }
}
