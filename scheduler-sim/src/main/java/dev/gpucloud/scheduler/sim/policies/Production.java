package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.scheduler.framework.plugins.FragmentationGradientScore;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.queue.PassResult;
import dev.gpucloud.scheduler.queue.QueuedJob;
import dev.gpucloud.scheduler.queue.RunningJob;
import dev.gpucloud.scheduler.queue.SchedulingPass;
import dev.gpucloud.scheduler.sim.engine.Decisions;
import dev.gpucloud.scheduler.sim.engine.Policy;
import dev.gpucloud.scheduler.sim.engine.SimJob;
import dev.gpucloud.scheduler.queue.Las;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What the scheduler service runs, on the simulator's virtual clock: scheduler-core's {@link JobQueue}
 * (priority classes, fair share between tenants, quotas), its {@link SchedulingPass} (place in queue
 * order, EASY backfill behind the first job that does not fit, preemption of lower classes) and the
 * placement framework with the service's own profile ({@link Profile#service}, FGD packing), the same
 * classes with the same settings as the service's defaults. Told no job's duration: as in the service,
 * a job without an estimate is assumed to run {@link #DEFAULT_ESTIMATE_SECONDS} for backfill.
 *
 * <p>A pass runs at every event (an arrival, an end, a host lost or back), as the service runs one after
 * every change. Trace jobs are NORMAL jobs of their trace's tenant, so none preempts another: a started
 * job runs to its end unless its host goes, and then it goes back in line where it was (its
 * {@code seq}). A trace job no host could ever run is refused at load, so nothing is unresolvable here.
 */
public final class Production implements Policy {

    /** The service's {@code default-runtime-estimate}. */
    public static final long DEFAULT_ESTIMATE_SECONDS = 24 * 3600;
    /** The service's {@code feasible-hosts-to-score}. */
    public static final int FEASIBLE_TO_SCORE = 32;
    /** The service's {@code xid-quarantine}. */
    public static final long XID_QUARANTINE_MILLIS = 3_600_000;

    private final FragmentationGradientScore fgd = new FragmentationGradientScore(1000);
    private final PlacementFramework framework = new PlacementFramework(
            Profile.service(fgd, Long.MAX_VALUE / 4, XID_QUARANTINE_MILLIS, FEASIBLE_TO_SCORE));
    private final SchedulingPass pass = new SchedulingPass(framework, DEFAULT_ESTIMATE_SECONDS);
    private final JobQueue queue = new JobQueue();
    /** Whether the last pass started preemptions: the next pass follows at once. */
    private boolean preempted;
    private FrameworkBridge bridge;
    private final Map<String, SimJob> jobs = new HashMap<>();
    /** Jobs holding GPUs, as backfill sees them, by job id. */
    private final Map<String, RunningJob> running = new LinkedHashMap<>();

    /** The service's defaults: {@link Las#DEFAULT}. */
    public Production() {
        this(Las.DEFAULT);
    }

    /** With another within-class order ({@link Las#OFF}: the place in line, no yielding). */
    public Production(Las las) {
        queue.setLas(las);
    }

    @Override
    public String name() {
        return "production";
    }

    /** The bridge to the simulated cluster, once the first decision has been made. */
    public FrameworkBridge bridge() {
        return bridge;
    }

    @Override
    public void schedule(Decisions d) {
        if (bridge == null) {
            bridge = new FrameworkBridge(d.cluster(), framework);
        }
        long now = d.now();
        bridge.sync(now);
        for (Iterator<RunningJob> it = running.values().iterator(); it.hasNext(); ) {
            RunningJob r = it.next();
            if (!jobs.get(r.jobId()).running()) { // it ended, or lost its host, or yielded, and is queued again
                queue.release(r.tenant(), r.gpuMilli(), 0);
                it.remove();
            }
        }
        for (SimJob j : d.active()) {
            if (!j.running() && queue.get(j.id()).isEmpty()) {
                jobs.putIfAbsent(j.id(), j);
                queue.enqueue(queued(j, now));
            }
        }
        PassResult result = pass.run(bridge.fleet(), queue, running.values(), Set.of(), now);
        Set<String> yielding = new HashSet<>();
        for (PassResult.Preemption p : result.preemptions()) {
            p.victims().forEach(v -> yielding.add(v.jobId()));
        }
        preempted = !yielding.isEmpty();
        for (SimJob j : d.running()) {
            if (yielding.contains(j.id())) {
                bridge.release(j); // it checkpoints and stops; back in line with the service it received
            } else {
                d.keep(j);
            }
        }
        for (PassResult.Placed p : result.placed()) {
            SimJob j = jobs.get(p.job().jobId());
            GangPlacer.Gang g = bridge.hold(j, p.decision().assignments());
            d.assign(j, g.hosts(), g.perHost());
            long milli = p.job().gpuMilli();
            queue.charge(j.trace().tenant(), milli, 0);
            running.put(j.id(), new RunningJob(j.id(), j.trace().tenant(), PriorityClass.NORMAL, milli, now,
                    now + DEFAULT_ESTIMATE_SECONDS * 1000, now, false, p.decision().assignments().stream()
                            .map(a -> a.allocationId()).toList(), j.attainedGpuSeconds(), true));
        }
    }

    /**
     * The service runs a pass after every change and at its reschedule interval; here, besides the events:
     * right after preemptions (their preemptors take the GPUs), when a running job passes a LAS limit and
     * when a queued job starts to starve, as long as some job waits.
     */
    @Override
    public long nextTick(Decisions d) {
        if (queue.size() == 0 || !queue.las().enabled()) {
            return Long.MAX_VALUE;
        }
        long now = d.now();
        if (preempted) {
            return now + 1;
        }
        Las las = queue.las();
        long next = Long.MAX_VALUE;
        for (RunningJob r : running.values()) {
            next = Math.min(next, las.nextLevelAt(r, now));
        }
        for (QueuedJob q : queue.jobs()) {
            // rounded down, so this tick can come up to a millisecond before Las#starvesAtMillis and the
            // promotion waits for the next event; docs/results.md's figures were made so (using
            // starvesAtMillis moves trace4's average by 0.2%: to change with the next rerun of the figures)
            if (!las.starving(q, now)) {
                double ranMillis = q.attainedGpuSeconds() / Math.max(0.001, q.gpuMilli() / 1000.0) * 1000;
                next = Math.min(next, q.queuedSinceMillis()
                        + (long) Math.max(las.starveAfterMillis(), las.starveFactor() * ranMillis));
            }
        }
        return next == Long.MAX_VALUE ? next : Math.max(next, now + 1);
    }

    /** The job's entry in line: its next attempt's request, its place kept across requeues, its service so far. */
    private QueuedJob queued(SimJob j, long now) {
        PlacementRequest request = bridge.nextRequest(j);
        fgd.observe(request);
        long since = j.attainedMillis() == 0 ? j.submitMillis() : now;
        return new QueuedJob(j.id(), j.trace().tenant(), PriorityClass.NORMAL, j.index(), request, 0,
                j.submitMillis(), j.attainedGpuSeconds(), since, true);
    }
}
