package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import java.time.Instant;
import java.util.List;

/** A host as the scheduler sees it: its last reported inventory, when it was last heard from, and whether it is draining. */
public record Host(HostInventory inventory, Instant lastSeen, boolean draining) {

    public Host {
        if (inventory == null || lastSeen == null) {
            throw new IllegalArgumentException("a host needs its inventory and the time it was last seen");
        }
    }

    public String nodeId() {
        return inventory.nodeId();
    }

    public List<GpuDevice> gpus() {
        return inventory.gpus();
    }

    public Host withDraining(boolean value) {
        return new Host(inventory, lastSeen, value);
    }
}
