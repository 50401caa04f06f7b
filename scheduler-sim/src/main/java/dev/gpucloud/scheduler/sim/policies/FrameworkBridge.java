package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.scheduler.sim.engine.SimCluster;
import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Places simulated jobs through the production placement framework (scheduler-core's
 * {@code framework} and {@code cluster.Fleet}, the code the scheduler service runs): the bridge keeps
 * a {@link Fleet} that mirrors the simulated cluster (hosts down, draining or under interruption notice;
 * what each running job holds) and asks {@link PlacementFramework#place} for each job to start. A job
 * of at most one host's GPUs is one worker; a bigger one is an RDMA gang of whole hosts. Trace jobs
 * checkpoint, so they accept spot capacity (SPOT_PREFERRED). Host choice (filters, packing and spot
 * scores) is the framework's.
 */
public final class FrameworkBridge {

    private final SimCluster cluster;
    private final Fleet fleet = new Fleet();
    private final PlacementFramework framework;
    private final Map<String, Integer> hostIndex = new HashMap<>();
    private final boolean[] removed;
    private final boolean[] draining;
    private final Map<SimJob, List<String>> held = new LinkedHashMap<>();
    private final Map<SimJob, Integer> attempts = new HashMap<>();
    private long placements;
    private long refusals;

    public FrameworkBridge(SimCluster cluster) {
        this(cluster, new PlacementFramework(Profile.builder("sim").heartbeatTimeoutMillis(Long.MAX_VALUE / 4).build()));
    }

    /** A bridge that places with {@code framework}: the service's profile, for the production policy. */
    public FrameworkBridge(SimCluster cluster, PlacementFramework framework) {
        if (cluster.inventories().size() != cluster.hostCount()) {
            throw new IllegalArgumentException("cluster " + cluster.name() + " has no host inventories to build a fleet from");
        }
        this.cluster = cluster;
        this.framework = framework;
        this.removed = new boolean[cluster.hostCount()];
        this.draining = new boolean[cluster.hostCount()];
        for (int h = 0; h < cluster.hostCount(); h++) {
            HostInventory inv = cluster.inventories().get(h);
            hostIndex.put(inv.nodeId(), h);
            fleet.upsert(inv, 0);
        }
    }

    /** Brings the mirror up to date: hosts lost, back or draining; jobs that stopped running. */
    public void sync(long now) {
        for (int h = 0; h < cluster.hostCount(); h++) {
            String id = cluster.hostId(h);
            if (cluster.isDown(h) && !removed[h]) {
                fleet.remove(id);
                removed[h] = true;
            } else if (!cluster.isDown(h) && removed[h]) {
                fleet.upsert(cluster.inventories().get(h), now);
                removed[h] = false;
                draining[h] = false;
            }
            if (!removed[h] && cluster.isDraining(h) != draining[h]) {
                fleet.drain(id, cluster.isDraining(h));
                draining[h] = cluster.isDraining(h);
            }
        }
        held.entrySet().removeIf(e -> {
            if (e.getKey().running()) {
                return false;
            }
            e.getValue().forEach(fleet::unreserve);
            return true;
        });
    }

    /** Frees what a job holds in the mirror (it is being preempted or moved). */
    public void release(SimJob job) {
        List<String> ids = held.remove(job);
        if (ids != null) {
            ids.forEach(fleet::unreserve);
        }
    }

    /** The mirror of the simulated cluster, as the placement framework sees it. */
    public Fleet fleet() {
        return fleet;
    }

    /**
     * What a trace job asks, as a placement request for its next attempt: a job of at most one host's GPUs is
     * one worker, a bigger one an RDMA gang of whole hosts; trace jobs checkpoint, so they take spot capacity.
     */
    public PlacementRequest nextRequest(SimJob job) {
        int attempt = attempts.merge(job, 1, Integer::sum);
        int size = cluster.maxHostGpus();
        int workers = job.gpus() <= size ? 1 : (job.gpus() + size - 1) / size;
        int perWorker = workers == 1 ? job.gpus() : size;
        return new PlacementRequest(job.id(), job.trace().tenant(), attempt, workers, perWorker, null,
                0, 0, 0, Set.of(), 0, workers > 1, false, CapacityPreference.SPOT_PREFERRED, 0, null, Set.of(),
                PriorityClass.NORMAL);
    }

    /** Places a job through the framework; null when it does not fit now. The GPUs are held in the mirror. */
    public GangPlacer.Gang place(SimJob job, long now) {
        Decision decision = framework.place(fleet, nextRequest(job), now);
        if (!decision.isPlaced()) {
            refusals++;
            return null;
        }
        return hold(job, decision.assignments());
    }

    /**
     * The job runs on {@code assignments}, which the framework reserved in the mirror: they stay held until it
     * stops running. Returns the hosts and GPUs per host the simulator runs it on.
     */
    public GangPlacer.Gang hold(SimJob job, List<Assignment> assignments) {
        placements++;
        Map<Integer, Integer> perHost = new LinkedHashMap<>();
        List<String> ids = new ArrayList<>();
        for (Assignment a : assignments) {
            Integer h = hostIndex.get(a.nodeId());
            if (h == null) {
                throw new IllegalStateException("the framework placed " + job + " on unknown host " + a.nodeId());
            }
            perHost.merge(h, a.gpuIndices().size(), Integer::sum);
            ids.add(a.allocationId());
        }
        held.put(job, ids);
        int[] hosts = perHost.keySet().stream().mapToInt(Integer::intValue).toArray();
        int[] per = perHost.values().stream().mapToInt(Integer::intValue).toArray();
        return new GangPlacer.Gang(hosts, per);
    }

    /** Jobs placed through the framework, and starts it refused (the GPU-count plan and the framework disagreed). */
    public long placements() {
        return placements;
    }

    public long refusals() {
        return refusals;
    }
}
