package dev.gpucloud.scheduler.placement;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.scheduler.cluster.ClusterState;
import dev.gpucloud.scheduler.cluster.Host;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The walking skeleton's placement: first fit over whole GPUs, hosts in id order, every worker or
 * none. A MIG or fractional request takes one whole GPU here; the scheduler issue replaces this with
 * the filter/score framework. It already honours allowed models, GPU memory, capacity type, drain,
 * one RDMA fabric for multi-host RDMA jobs and one NVLink island per NVLink worker, and says why a
 * job does not fit.
 */
public final class FirstFitPlacer {

    /** Places all of a job's workers on the cluster as it is now, on any host heard from lately; changes nothing. */
    public Placement place(JobSpec spec, ClusterState cluster) {
        return place(spec, cluster, Instant.MIN);
    }

    /**
     * Places all of a job's workers; hosts last heard from before {@code staleBefore} take nothing
     * (an agent that stopped reporting may be gone). Changes nothing.
     */
    public Placement place(JobSpec spec, ClusterState cluster, Instant staleBefore) {
        int gpusPerWorker = spec.gpusPerWorker() > 0 ? spec.gpusPerWorker() : 1;
        Map<String, Set<Integer>> taken = new HashMap<>();
        List<WorkerSlot> slots = new ArrayList<>();
        String fabric = null;
        for (int rank = 0; rank < spec.workers(); rank++) {
            Map<String, Integer> reasons = new LinkedHashMap<>();
            WorkerSlot slot = null;
            for (Host host : ordered(cluster, spec)) {
                String reason = hostReason(spec, host, fabric);
                if (reason == null && host.lastSeen().isBefore(staleBefore)) {
                    reason = "no telemetry lately (host may be gone)";
                }
                if (reason == null) {
                    List<Integer> gpus = pickGpus(spec, cluster, host, gpusPerWorker,
                            taken.getOrDefault(host.nodeId(), Set.of()));
                    if (gpus != null) {
                        slot = new WorkerSlot(rank, host.nodeId(), gpus);
                        break;
                    }
                    reason = "insufficient free GPUs (need " + gpusPerWorker
                            + (spec.interconnect() == Interconnect.NVLINK ? " on one NVLink island" : "") + ")";
                }
                reasons.merge(reason, 1, Integer::sum);
            }
            if (slot == null) {
                if (cluster.hosts().isEmpty()) {
                    return Placement.unschedulable(List.of("no hosts have reported inventory"));
                }
                return Placement.unschedulable(summarize(rank, spec.workers(), reasons));
            }
            slots.add(slot);
            taken.computeIfAbsent(slot.nodeId(), k -> new HashSet<>()).addAll(slot.gpuIndices());
            if (spec.interconnect() == Interconnect.RDMA && fabric == null) {
                fabric = cluster.host(slot.nodeId()).map(h -> h.inventory().rdmaFabric()).orElse(null);
            }
        }
        return Placement.placed(slots);
    }

    /** Spot-preferred jobs look at spot hosts first; otherwise hosts in id order. */
    private static List<Host> ordered(ClusterState cluster, JobSpec spec) {
        List<Host> hosts = new ArrayList<>(cluster.hosts());
        if (spec.capacity() == CapacityPreference.SPOT_PREFERRED) {
            hosts.sort(Comparator.comparing((Host h) -> h.inventory().capacityType() != CapacityType.SPOT)
                    .thenComparing(Host::nodeId));
        }
        return hosts;
    }

    /** Why this host cannot take any worker of the job, or null if it might. */
    static String hostReason(JobSpec spec, Host host, String fabric) {
        if (host.draining()) {
            return "draining";
        }
        CapacityType capacity = host.inventory().capacityType();
        if (spec.capacity() == CapacityPreference.ON_DEMAND && capacity == CapacityType.SPOT) {
            return "spot capacity, job wants on-demand";
        }
        if (spec.capacity() == CapacityPreference.SPOT && capacity != CapacityType.SPOT) {
            return "not spot capacity, job wants spot";
        }
        if (spec.interconnect() == Interconnect.RDMA && spec.workers() > 1) {
            String hostFabric = host.inventory().rdmaFabric();
            if (hostFabric == null || hostFabric.isBlank()) {
                return "no RDMA fabric";
            }
            if (fabric != null && !fabric.equals(hostFabric)) {
                return "other RDMA fabric than the job's first worker (" + fabric + ")";
            }
        }
        boolean modelOk = false;
        boolean memoryOk = false;
        for (GpuDevice gpu : host.gpus()) {
            if (modelAllowed(spec, gpu)) {
                modelOk = true;
                if (gpu.memoryMib() >= spec.minGpuMemoryMib()) {
                    memoryOk = true;
                }
            }
        }
        if (!modelOk) {
            return host.gpus().isEmpty() ? "no GPUs" : "GPU model not allowed (job wants " + String.join(", ", spec.gpuModels()) + ")";
        }
        if (!memoryOk) {
            return "GPU memory below " + spec.minGpuMemoryMib() + " MiB";
        }
        return null;
    }

    private static boolean modelAllowed(JobSpec spec, GpuDevice gpu) {
        return spec.gpuModels().isEmpty() || spec.gpuModels().contains(gpu.model());
    }

    private static List<Integer> pickGpus(JobSpec spec, ClusterState cluster, Host host, int count, Set<Integer> taken) {
        List<GpuDevice> candidates = cluster.freeGpus(host.nodeId()).stream()
                .filter(g -> !taken.contains(g.index()))
                .filter(g -> modelAllowed(spec, g) && g.memoryMib() >= spec.minGpuMemoryMib())
                .toList();
        if (spec.interconnect() == Interconnect.NVLINK) {
            Map<Integer, List<GpuDevice>> islands = candidates.stream()
                    .filter(g -> g.nvlinkIsland() >= 0)
                    .collect(Collectors.groupingBy(GpuDevice::nvlinkIsland, java.util.TreeMap::new, Collectors.toList()));
            for (List<GpuDevice> island : islands.values()) {
                if (island.size() >= count) {
                    return island.subList(0, count).stream().map(GpuDevice::index).toList();
                }
            }
            return null;
        }
        if (candidates.size() < count) {
            return null;
        }
        return candidates.subList(0, count).stream().map(GpuDevice::index).toList();
    }

    private static List<String> summarize(int rank, int workers, Map<String, Integer> reasons) {
        List<String> lines = new ArrayList<>();
        if (workers > 1) {
            lines.add("worker " + rank + " of " + workers + " has no place (a gang starts all workers or none)");
        }
        reasons.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .forEach(e -> lines.add(e.getValue() + (e.getValue() == 1 ? " host: " : " hosts: ") + e.getKey()));
        return lines;
    }
}
