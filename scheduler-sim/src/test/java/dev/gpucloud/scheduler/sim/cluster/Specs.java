package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobSpec;
import java.util.List;
import java.util.Map;

/** Job specs for the cluster models' placement tests: workers of whole GPUs, and what they ask of hosts. */
final class Specs {

    private Specs() {
    }

    static JobSpec mkJob(int workers, int gpusPerWorker) {
        return mkJob(workers, gpusPerWorker, List.of(), Interconnect.NONE, CapacityPreference.ON_DEMAND);
    }

    static JobSpec mkJob(int workers, int gpusPerWorker, List<String> models, Interconnect interconnect,
            CapacityPreference capacity) {
        return new JobSpec("sim-job", workers, gpusPerWorker, null, 0, 0, 0, models, 0, interconnect, capacity, null,
                null, 0, null, 0, List.of("true"), Map.of());
    }
}
