package dev.gpucloud.scheduler;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Builders that keep test cases short: mkHost(...), mkJob(...). */
public final class Fixtures {
    public static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

    private Fixtures() {
    }

    public static HostInventory mkHost(String nodeId, String model, int gpus, CapacityType capacity, String fabric) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, nodeId + "-gpu" + i, model, 40_960, null, i < 4 ? 0 : 1, false, List.of()));
        }
        return new HostInventory(nodeId, nodeId, "test", "zone-a", capacity, 1_000_000, 8000, 65536, fabric,
                List.of(), devices, List.of(), "simulated", T0);
    }

    public static HostInventory mkHost(String nodeId, String model, int gpus) {
        return mkHost(nodeId, model, gpus, CapacityType.ON_DEMAND, null);
    }

    public static JobSpec mkJob(int workers, int gpusPerWorker) {
        return mkJob(workers, gpusPerWorker, List.of(), Interconnect.NONE, CapacityPreference.ON_DEMAND);
    }

    public static JobSpec mkJob(int workers, int gpusPerWorker, List<String> models, Interconnect interconnect,
            CapacityPreference capacity) {
        return new JobSpec("job", workers, gpusPerWorker, null, 0, 0, 0, models, 0, interconnect, capacity, null,
                null, 0, null, 0, List.of("sleep", "1"), Map.of());
    }
}
