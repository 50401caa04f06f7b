package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.geometry.GpuAdmission;
import dev.gpucloud.geometry.MigSlot;
import dev.gpucloud.geometry.NvidiaMigTable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Who holds which GPU of one real host. A whole-GPU allocation takes a GPU alone; fractions share
 * a GPU up to 1000 milli-GPUs; a MIG instance is held by one allocation, and a GPU in MIG mode is
 * only handed out by its instances, named by UUID or by slot ({@code 3g.40gb@4}, see {@link MigSlots}).
 * The rule is gpu-geometry's {@link GpuAdmission}, the one the scheduler placed by. Simulated hosts
 * keep their allocations in one too.
 */
public final class GpuLedger {

    /** What a START asks of the host, resolved: which GPUs, how billed, and how many units. */
    public record Claim(List<Integer> gpuIndices, String migInstanceUuid, int milliPerGpu, Sku sku, int units) {
    }

    /**
     * Either a claim, or why there is none, or (for a MIG slot with no instance yet) the instance to
     * create before the claim can be made with {@link #migClaim}. {@code heldBy} names the allocations that
     * hold what the request asks for, when that is why there is no claim (empty otherwise).
     */
    public record Result(Claim claim, String problem, MigSlots.Plan create, List<String> heldBy) {
        public Result {
            heldBy = heldBy == null ? List.of() : List.copyOf(heldBy);
        }

        public Result(Claim claim, String problem, MigSlots.Plan create) {
            this(claim, problem, create, List.of());
        }

        static Result ok(Claim claim) {
            return new Result(claim, null, null);
        }

        static Result no(String problem) {
            return new Result(null, problem, null);
        }

        /** Refused because other allocations ({@code heldBy}) hold what it asks for. */
        static Result busy(String problem, java.util.Collection<String> heldBy) {
            return new Result(null, problem, null, List.copyOf(heldBy));
        }

        static Result toCreate(MigSlots.Plan plan) {
            return new Result(null, null, plan);
        }

        /** Whether it was refused only because its GPUs are busy: the placement's doing, not the job's. */
        public boolean busy() {
            return claim == null && !heldBy.isEmpty();
        }
    }

    /** Replaced (never changed in place) when the MIG layout changes; read by other threads (telemetry). */
    private volatile HostInventory host;
    private final List<Map<String, Integer>> holders = new ArrayList<>();
    private final Map<String, String> migHolders = new LinkedHashMap<>();

    public GpuLedger(HostInventory host) {
        this.host = host;
        for (int i = 0; i < host.gpus().size(); i++) {
            holders.add(new LinkedHashMap<>());
        }
    }

    public HostInventory host() {
        return host;
    }

    /** Checks a START's request against what is free: a claim to {@link #hold}, or the reason it cannot run. */
    public Result check(List<Integer> gpuIndices, String migInstanceUuid, int milliGpu) {
        List<GpuDevice> gpus = host.gpus();
        String nodeId = host.nodeId();
        if (milliGpu > Sku.WHOLE_GPU) {
            return Result.no("milliGpu " + milliGpu + " is more than one GPU; ask for whole GPUs instead");
        }
        Set<Integer> seen = new HashSet<>();
        for (int index : gpuIndices) {
            if (!seen.add(index)) {
                return Result.no("GPU " + index + " is listed twice");
            }
            if (index < 0 || index >= gpus.size()) {
                return Result.no(noSuchGpu(index, nodeId, gpus.size()));
            }
        }
        Optional<NodeCommand.MigSlot> slot = NodeCommand.MigSlot.parse(migInstanceUuid);
        if (slot.isPresent()) {
            MigSlots.Plan plan = MigSlots.resolve(nodeId, gpus, gpuIndices, slot.get(), migHolders::get);
            if (plan.problem() != null) {
                return Result.busy(plan.problem(), plan.heldBy());
            }
            return plan.creates() ? Result.toCreate(plan) : Result.ok(migClaim(plan.gpuIndex(), plan.existing()));
        }
        if (MigSlot.looksLikeSlot(migInstanceUuid)) {
            try {
                MigSlot.parse(migInstanceUuid);
            } catch (IllegalArgumentException e) {
                return Result.no(e.getMessage());
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
                return Result.busy("MIG instance " + migInstanceUuid + " on " + nodeId + " is busy with " + holder,
                        List.of(holder));
            }
            MigInstance mig = parent.get().migInstances().stream()
                    .filter(m -> m.uuid().equals(migInstanceUuid)).findFirst().orElseThrow();
            return Result.ok(new Claim(List.of(parentIndex), migInstanceUuid, 0,
                    new Sku(parent.get().model(), mig.profile(), Sku.WHOLE_GPU), 1));
        }
        boolean fraction = milliGpu > 0 && milliGpu < Sku.WHOLE_GPU;
        int milli = fraction ? milliGpu : Sku.WHOLE_GPU;
        for (int index : gpuIndices) {
            GpuDevice gpu = gpus.get(index);
            Map<String, Integer> held = holders.get(index);
            int used = milliHeld(index);
            String why = switch (GpuAdmission.share(gpu.migEnabled() ? NvidiaMigTable.forGpu(gpu.model(), gpu.memoryMib())
                    .orElseGet(() -> NvidiaMigTable.unlisted(gpu.model())) : null, used, milli)) {
                case ADMITTED -> null;
                case IN_MIG_MODE -> "GPU " + index + " on " + nodeId + " is in MIG mode; ask for one of its MIG instances";
                case HELD -> "GPU " + index + " on " + nodeId + " is busy with " + String.join(", ", held.keySet());
                default -> "GPU " + index + " on " + nodeId + " has " + (Sku.WHOLE_GPU - used)
                        + " milli-GPU free, asked for " + milli;
            };
            if (why != null) {
                return Result.busy(why, gpu.migEnabled() ? List.of() : held.keySet());
            }
        }
        String model = gpus.get(gpuIndices.get(0)).model();
        Sku sku = fraction ? new Sku(model, null, milli) : Sku.wholeGpu(model);
        return Result.ok(new Claim(List.copyOf(gpuIndices), null, milli, sku, gpuIndices.size()));
    }

    /** Why GPU {@code index} cannot be used: {@code nodeId} has only {@code count} GPUs. */
    static String noSuchGpu(int index, String nodeId, int count) {
        return "GPU " + index + " does not exist on " + nodeId + " (" + count + " GPU"
                + (count == 1 ? ": 0)" : "s" + (count == 0 ? ")" : ": 0.." + (count - 1) + ")"));
    }

    /** The claim of a whole MIG instance on GPU {@code gpuIndex}: one unit of its MIG SKU. */
    public Claim migClaim(int gpuIndex, MigInstance mig) {
        return new Claim(List.of(gpuIndex), mig.uuid(), 0, new Sku(host.gpus().get(gpuIndex).model(), mig.profile(),
                Sku.WHOLE_GPU), 1);
    }

    /** The host's MIG layout changed: GPU {@code gpuIndex} lost {@code removed} and gained {@code added} (may be null). */
    public void changeMig(int gpuIndex, List<MigInstance> removed, MigInstance added) {
        List<GpuDevice> gpus = new ArrayList<>(host.gpus());
        GpuDevice gpu = gpus.get(gpuIndex);
        List<MigInstance> migs = new ArrayList<>(gpu.migInstances());
        migs.removeIf(m -> removed.stream().anyMatch(r -> r.uuid().equals(m.uuid())));
        if (added != null) {
            migs.add(added);
        }
        migs.sort(java.util.Comparator.comparing(m -> m.placementStart() == null ? -1 : m.placementStart()));
        gpus.set(gpuIndex, new GpuDevice(gpu.index(), gpu.uuid(), gpu.model(), gpu.memoryMib(), gpu.pciBusId(),
                gpu.nvlinkIsland(), gpu.migEnabled(), migs));
        host = new HostInventory(host.nodeId(), host.hostname(), host.instanceType(), host.zone(), host.capacityType(),
                host.priceMicrosPerHour(), host.cpuMillis(), host.memoryMib(), host.rdmaFabric(), host.switchPath(),
                gpus, host.cachedDatasets(), host.backend(), host.observedAt(), host.rdmaNics());
    }

    /** Gives {@code claim} to {@code allocationId}. */
    public void hold(String allocationId, Claim claim) {
        if (claim.migInstanceUuid() != null) {
            migHolders.put(claim.migInstanceUuid(), allocationId);
            return;
        }
        for (int index : claim.gpuIndices()) {
            holders.get(index).put(allocationId, claim.milliPerGpu());
        }
    }

    /** The milli-GPUs held on GPU {@code index} (1000 per whole-GPU allocation). */
    public int milliHeld(int index) {
        return holders.get(index).values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Whether an allocation holds the MIG instance {@code migUuid}. */
    public boolean migBusy(String migUuid) {
        return migHolders.containsKey(migUuid);
    }

    /** Frees everything {@code allocationId} held. */
    public void release(String allocationId) {
        for (Map<String, Integer> held : holders) {
            held.remove(allocationId);
        }
        migHolders.values().removeIf(allocationId::equals);
    }
}
