package dev.gpucloud.scheduler.framework;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;

/** What an empty, healthy host could hold of a request: the static side of admission. */
final class Capacity {

    private Capacity() {
    }

    static int staticWorkers(PlacementRequest r, NodeState node) {
        boolean spot = node.capacityType() == CapacityType.SPOT;
        if ((r.capacity() == CapacityPreference.ON_DEMAND && spot) || (r.capacity() == CapacityPreference.SPOT && !spot)) {
            return 0;
        }
        if (r.multiHostRdma() && node.fabric() == null) {
            return 0;
        }
        int fit;
        switch (r.kind()) {
            case WHOLE -> {
                int n = node.gpuCount();
                int[] island = new int[n + 1];
                int ok = 0;
                for (int i = 0; i < n; i++) {
                    GpuState g = node.gpu(i);
                    if (g.mig() == null && r.accepts(g)) {
                        ok++;
                        island[g.island() >= 0 && g.island() < n ? g.island() : n]++;
                    }
                }
                if (r.nvlink()) {
                    fit = 0;
                    for (int c : island) {
                        fit += c / r.gpusPerWorker();
                    }
                } else {
                    fit = ok / r.gpusPerWorker();
                }
            }
            case MIG -> {
                fit = 0;
                for (int i = 0; i < node.gpuCount(); i++) {
                    GpuState g = node.gpu(i);
                    if (g.mig() != null && r.acceptsModel(g)
                            && g.mig().profile(r.migProfile()).isPresent()) {
                        fit += g.mig().memorySlices() / g.mig().profile(r.migProfile()).get().memorySlices();
                    }
                }
            }
            case FRACTION -> {
                fit = 0;
                for (int i = 0; i < node.gpuCount(); i++) {
                    GpuState g = node.gpu(i);
                    if (g.mig() == null && r.accepts(g)) {
                        fit += 1000 / r.milliGpu();
                    }
                }
            }
            default -> fit = 0;
        }
        if (r.cpuMillis() > 0) {
            fit = Math.min(fit, node.cpuMillis() / r.cpuMillis());
        }
        if (r.memoryMib() > 0) {
            fit = (int) Math.min(fit, node.memoryMib() / r.memoryMib());
        }
        return fit;
    }
}
