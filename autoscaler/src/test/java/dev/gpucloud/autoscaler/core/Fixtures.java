package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Builders that keep the cases short: jobs, hosts, pools, and turning a plan's launches into launching hosts. */
final class Fixtures {

    static final long MIN = 60_000;
    static final long NOW = 1_000 * MIN;
    static final Catalog AWS = Catalog.aws();
    static final AutoscalerConfig CONFIG = AutoscalerConfig.defaults();

    private Fixtures() {}

    /** A job of pool "train", pending since a minute ago, no ceiling. */
    static PendingJob job(String id, int workers, int gpusPerWorker, String model, boolean checkpointable) {
        return new PendingJob(id, "train", workers, gpusPerWorker, model == null ? List.of() : List.of(model), false,
                CapacityPreference.ANY, checkpointable, 0, NOW - MIN);
    }

    static PendingJob gang(String id, int workers, int gpusPerWorker, String model) {
        return new PendingJob(id, "train", workers, gpusPerWorker, List.of(model), true, CapacityPreference.ANY, true,
                0, NOW - MIN);
    }

    static PendingJob with(PendingJob j, CapacityPreference capacity) {
        return new PendingJob(j.jobId(), j.pool(), j.workers(), j.gpusPerWorker(), j.gpuModels(), j.needsFabric(),
                capacity, j.checkpointable(), j.maxUsdPerHour(), j.pendingSince());
    }

    static PendingJob withCeiling(PendingJob j, double usd) {
        return new PendingJob(j.jobId(), j.pool(), j.workers(), j.gpusPerWorker(), j.gpuModels(), j.needsFabric(),
                j.capacity(), j.checkpointable(), usd, j.pendingSince());
    }

    static PendingJob since(PendingJob j, long pendingSince) {
        return new PendingJob(j.jobId(), j.pool(), j.workers(), j.gpusPerWorker(), j.gpuModels(), j.needsFabric(),
                j.capacity(), j.checkpointable(), j.maxUsdPerHour(), pendingSince);
    }

    /** A registered host of pool "train", launched an hour ago, busy. */
    static Host running(String id, String type, Capacity capacity, int free, int allocated) {
        return new Host(id, "train", type, capacity, HostState.RUNNING, NOW - 60 * MIN, free, allocated,
                allocated > 0 ? 1.0 : 0, -1, true, null);
    }

    /** A registered host with no allocations, unneeded since {@code minutesAgo}. */
    static Host idle(String id, String type, long minutesAgo) {
        int gpus = AWS.require(type).gpus();
        return new Host(id, "train", type, Capacity.ON_DEMAND, HostState.RUNNING, NOW - 120 * MIN, gpus, 0, 0,
                NOW - minutesAgo * MIN, true, null);
    }

    static Host underused(String id, String type, int allocated, double utilization, long minutesAgo,
            boolean checkpointable) {
        int gpus = AWS.require(type).gpus();
        return new Host(id, "train", type, Capacity.ON_DEMAND, HostState.RUNNING, NOW - 120 * MIN, gpus - allocated,
                allocated, utilization, NOW - minutesAgo * MIN, checkpointable, null);
    }

    static Map<String, PoolLimits> unlimited() {
        return Map.of("train", PoolLimits.unlimited());
    }

    static Map<String, PoolLimits> pool(PoolLimits limits) {
        return Map.of("train", limits);
    }

    static Plan decide(List<PendingJob> jobs, List<Host> supply, Map<String, PoolLimits> limits) {
        return Autoscaler.decide(NOW, jobs, supply, AWS, limits, CONFIG);
    }

    /** What the fleet would hold after carrying out the plan's launches: the hosts, still launching. */
    static List<Host> carriedOut(Plan plan, long at) {
        List<Host> hosts = new ArrayList<>();
        int n = 0;
        for (Launch l : plan.launches()) {
            for (int i = 0; i < l.count(); i++) {
                hosts.add(Host.launching("new-" + n++, l.pool(), l.instanceType(), l.capacity(), at,
                        l.placementGroup()));
            }
        }
        return hosts;
    }
}
