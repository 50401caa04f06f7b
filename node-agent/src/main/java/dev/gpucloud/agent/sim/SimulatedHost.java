package dev.gpucloud.agent.sim;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One simulated host: what it is (instance type, GPUs, fabric, price) and who holds its GPUs now.
 * A whole-GPU allocation takes a GPU alone; fractions share a GPU up to 1000 milli-GPUs; a MIG
 * instance is held by one allocation, and a GPU in MIG mode is only handed out by its instances.
 */
public final class SimulatedHost {

    /** What a START asks of this host, resolved: which GPUs, how billed, and how many units. */
    public record Claim(List<Integer> gpuIndices, String migInstanceUuid, int milliPerGpu, Sku sku, int units) {
    }

    private final String nodeId;
    private final HostProfile profile;
    private final CapacityType capacityType;
    private final long priceMicrosPerHour;
    private final String zone;
    private final String rdmaFabric;
    private final List<String> switchPath;
    private final List<GpuDevice> gpus;

    /** Per GPU: allocation id to the milli-GPUs it holds there (1000 for a whole GPU). */
    private final List<Map<String, Integer>> holders = new ArrayList<>();
    /** MIG instance UUID to the allocation holding it. */
    private final Map<String, String> migHolders = new LinkedHashMap<>();

    private final long[] energyMillijoules;
    private Instant lastSampleAt;
    private long samples;

    SimulatedHost(String nodeId, HostProfile profile, CapacityType capacityType, long priceMicrosPerHour, String zone,
            String rdmaFabric, List<String> switchPath, List<GpuDevice> gpus) {
        this.nodeId = nodeId;
        this.profile = profile;
        this.capacityType = capacityType;
        this.priceMicrosPerHour = priceMicrosPerHour;
        this.zone = zone;
        this.rdmaFabric = rdmaFabric;
        this.switchPath = List.copyOf(switchPath);
        this.gpus = List.copyOf(gpus);
        for (int i = 0; i < gpus.size(); i++) {
            holders.add(new LinkedHashMap<>());
        }
        this.energyMillijoules = new long[gpus.size()];
    }

    public String nodeId() {
        return nodeId;
    }

    public HostProfile profile() {
        return profile;
    }

    public CapacityType capacityType() {
        return capacityType;
    }

    public String zone() {
        return zone;
    }

    public List<GpuDevice> gpus() {
        return gpus;
    }

    /** The host as gpu.inventory describes it. */
    public HostInventory inventory(Instant observedAt) {
        return new HostInventory(nodeId, nodeId, profile.instanceType(), zone, capacityType, priceMicrosPerHour,
                profile.vcpus() * 1000, profile.memoryGib() * 1024, rdmaFabric, switchPath, gpus, List.of(),
                "simulated", observedAt, rdmaNics());
    }

    /** A host on a fabric has one 200 Gb/s InfiniBand port per GPU (a DGX's layout), all ACTIVE; others none. */
    private List<RdmaNic> rdmaNics() {
        if (rdmaFabric == null || rdmaFabric.isBlank()) {
            return List.of();
        }
        List<RdmaNic> nics = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            nics.add(new RdmaNic("mlx5_" + i, 1, "ACTIVE", "InfiniBand", 200));
        }
        return nics;
    }

    /**
     * Checks a START's request against what is free; either a claim to {@link #hold} or the reason
     * it cannot run.
     */
    public Result check(List<Integer> gpuIndices, String migInstanceUuid, int milliGpu) {
        String model = profile.model().modelName;
        if (milliGpu > Sku.WHOLE_GPU) {
            return Result.no("milliGpu " + milliGpu + " is more than one GPU; ask for whole GPUs instead");
        }
        Set<Integer> seen = new HashSet<>();
        for (int index : gpuIndices) {
            if (!seen.add(index)) {
                return Result.no("GPU " + index + " is listed twice");
            }
            if (index < 0 || index >= gpus.size()) {
                return Result.no("GPU " + index + " does not exist on " + nodeId + " (" + gpus.size() + " GPU"
                        + (gpus.size() == 1 ? ": 0)" : "s: 0.." + (gpus.size() - 1) + ")"));
            }
        }
        if (migInstanceUuid != null) {
            Optional<GpuDevice> parent = gpus.stream()
                    .filter(g -> g.migInstances().stream().anyMatch(m -> m.uuid().equals(migInstanceUuid)))
                    .findFirst();
            if (parent.isEmpty()) {
                return Result.no("MIG instance " + migInstanceUuid + " does not exist on " + nodeId);
            }
            int parentIndex = parent.get().index();
            if (!gpuIndices.isEmpty() && !gpuIndices.equals(List.of(parentIndex))) {
                return Result.no("MIG instance " + migInstanceUuid + " is on GPU " + parentIndex + ", not " + gpuIndices);
            }
            String holder = migHolders.get(migInstanceUuid);
            if (holder != null) {
                return Result.no("MIG instance " + migInstanceUuid + " on " + nodeId + " is busy with " + holder);
            }
            MigInstance mig = parent.get().migInstances().stream()
                    .filter(m -> m.uuid().equals(migInstanceUuid)).findFirst().orElseThrow();
            return Result.ok(new Claim(List.of(parentIndex), migInstanceUuid, 0,
                    new Sku(model, mig.profile(), Sku.WHOLE_GPU), 1));
        }
        boolean fraction = milliGpu > 0 && milliGpu < Sku.WHOLE_GPU;
        int milli = fraction ? milliGpu : Sku.WHOLE_GPU;
        for (int index : gpuIndices) {
            GpuDevice gpu = gpus.get(index);
            if (gpu.migEnabled()) {
                return Result.no("GPU " + index + " on " + nodeId + " is in MIG mode; ask for one of its MIG instances");
            }
            Map<String, Integer> held = holders.get(index);
            int used = held.values().stream().mapToInt(Integer::intValue).sum();
            if (!fraction && used > 0) {
                return Result.no("GPU " + index + " on " + nodeId + " is busy with " + String.join(", ", held.keySet()));
            }
            if (fraction && used + milli > Sku.WHOLE_GPU) {
                return Result.no("GPU " + index + " on " + nodeId + " has " + (Sku.WHOLE_GPU - used)
                        + " milli-GPU free, asked for " + milli);
            }
        }
        Sku sku = fraction ? new Sku(model, null, milli) : Sku.wholeGpu(model);
        return Result.ok(new Claim(List.copyOf(gpuIndices), null, milli, sku, gpuIndices.size()));
    }

    /** Either a claim or why there is none. */
    public record Result(Claim claim, String problem) {
        static Result ok(Claim claim) {
            return new Result(claim, null);
        }

        static Result no(String problem) {
            return new Result(null, problem);
        }
    }

    void hold(String allocationId, Claim claim) {
        if (claim.migInstanceUuid() != null) {
            migHolders.put(claim.migInstanceUuid(), allocationId);
            return;
        }
        for (int index : claim.gpuIndices()) {
            holders.get(index).put(allocationId, claim.milliPerGpu());
        }
    }

    void release(String allocationId) {
        for (Map<String, Integer> held : holders) {
            held.remove(allocationId);
        }
        migHolders.values().removeIf(allocationId::equals);
    }

    /** How loaded GPU {@code index} is, 0..1: its share held, or its busy MIG instances over all of them. */
    double load(int index) {
        GpuDevice gpu = gpus.get(index);
        if (gpu.migEnabled()) {
            long busy = gpu.migInstances().stream().filter(m -> migHolders.containsKey(m.uuid())).count();
            return gpu.migInstances().isEmpty() ? 0 : (double) busy / gpu.migInstances().size();
        }
        int used = holders.get(index).values().stream().mapToInt(Integer::intValue).sum();
        return Math.min(1.0, used / (double) Sku.WHOLE_GPU);
    }

    boolean migBusy(String migUuid) {
        return migHolders.containsKey(migUuid);
    }

    long[] energyMillijoules() {
        return energyMillijoules;
    }

    Instant lastSampleAt() {
        return lastSampleAt;
    }

    long nextSample(Instant at) {
        lastSampleAt = at;
        return samples++;
    }
}
