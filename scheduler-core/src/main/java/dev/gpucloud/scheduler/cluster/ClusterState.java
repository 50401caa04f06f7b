package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the scheduler knows of the fleet: hosts from gpu.inventory and the GPUs its own allocations
 * hold. An allocation may name a host that has not (re)appeared yet, as after a restart; its GPUs
 * count as held when the host comes back. Not thread-safe: one owner applies changes in order.
 */
public final class ClusterState {

    private final Map<String, Host> hosts = new TreeMap<>();
    private final Map<String, Allocation> allocations = new LinkedHashMap<>();

    /** Adds or replaces a host's description; keeps its drain flag and the latest time it was heard from. */
    public void upsertHost(HostInventory inventory, Instant seenAt) {
        Host previous = hosts.get(inventory.nodeId());
        Instant lastSeen = previous != null && previous.lastSeen().isAfter(seenAt) ? previous.lastSeen() : seenAt;
        hosts.put(inventory.nodeId(), new Host(inventory, lastSeen, previous != null && previous.draining()));
    }

    /** Removes a host; returns the allocations that were on it, which are now lost. */
    public List<Allocation> removeHost(String nodeId) {
        hosts.remove(nodeId);
        return allocations.values().stream().filter(a -> a.nodeId().equals(nodeId)).toList();
    }

    /** The host was heard from (telemetry) at {@code at}; an older time never moves it back. */
    public void heardFrom(String nodeId, Instant at) {
        Host host = hosts.get(nodeId);
        if (host != null && at.isAfter(host.lastSeen())) {
            hosts.put(nodeId, new Host(host.inventory(), at, host.draining()));
        }
    }

    public void setDraining(String nodeId, boolean draining) {
        Host host = hosts.get(nodeId);
        if (host != null) {
            hosts.put(nodeId, host.withDraining(draining));
        }
    }

    public Optional<Host> host(String nodeId) {
        return Optional.ofNullable(hosts.get(nodeId));
    }

    public Collection<Host> hosts() {
        return hosts.values();
    }

    /** Records that an allocation holds its GPUs. Reserving the same allocation twice is a no-op. */
    public void reserve(Allocation allocation) {
        Allocation existing = allocations.get(allocation.allocationId());
        if (existing != null) {
            return;
        }
        Set<Integer> busy = busyGpus(allocation.nodeId());
        for (int index : allocation.gpuIndices()) {
            if (busy.contains(index)) {
                throw new IllegalStateException("GPU " + index + " of " + allocation.nodeId()
                        + " is already held; cannot reserve it for " + allocation.allocationId());
            }
        }
        allocations.put(allocation.allocationId(), allocation);
    }

    /** Frees an allocation's GPUs. Idempotent: releasing an unknown allocation does nothing. */
    public Optional<Allocation> release(String allocationId) {
        return Optional.ofNullable(allocations.remove(allocationId));
    }

    public Optional<Allocation> allocation(String allocationId) {
        return Optional.ofNullable(allocations.get(allocationId));
    }

    public List<Allocation> allocationsOf(String jobId) {
        return allocations.values().stream().filter(a -> a.jobId().equals(jobId))
                .sorted(Comparator.comparingInt(Allocation::rank)).toList();
    }

    /** Indices of a host's GPUs held by some allocation. */
    public Set<Integer> busyGpus(String nodeId) {
        Set<Integer> busy = new HashSet<>();
        for (Allocation a : allocations.values()) {
            if (a.nodeId().equals(nodeId)) {
                busy.addAll(a.gpuIndices());
            }
        }
        return busy;
    }

    /** A host's free GPUs, in index order. */
    public List<GpuDevice> freeGpus(String nodeId) {
        Host host = hosts.get(nodeId);
        if (host == null) {
            return List.of();
        }
        Set<Integer> busy = busyGpus(nodeId);
        List<GpuDevice> free = new ArrayList<>();
        for (GpuDevice gpu : host.gpus()) {
            if (!busy.contains(gpu.index())) {
                free.add(gpu);
            }
        }
        free.sort(Comparator.comparingInt(GpuDevice::index));
        return free;
    }

    /** Which allocation holds a given GPU, if any. */
    public Optional<String> holderOf(String nodeId, int gpuIndex) {
        return allocations.values().stream()
                .filter(a -> a.nodeId().equals(nodeId) && a.gpuIndices().contains(gpuIndex))
                .map(Allocation::allocationId).findFirst();
    }
}
