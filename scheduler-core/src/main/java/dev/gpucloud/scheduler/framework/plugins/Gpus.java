package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.framework.PlacementRequest;

/** Small shared checks on one GPU against a request. */
final class Gpus {

    private Gpus() {
    }

    static boolean modelAllowed(PlacementRequest r, GpuState g) {
        return r.acceptsModel(g);
    }

    /** Allowed model with enough memory (for a MIG slice the slice's memory is checked elsewhere). */
    static boolean allowed(PlacementRequest r, GpuState g) {
        return r.accepts(g);
    }

    static String models(PlacementRequest r) {
        return r.models().size() == 1 ? r.models().iterator().next() : String.join("/", new java.util.TreeSet<>(r.models()));
    }
}
