package dev.gpucloud.scheduler.placement;

import java.util.List;

/**
 * The outcome of placing a job: every worker's slot (all or nothing), or, when it does not fit, the
 * counted reasons per host, e.g. "2 hosts: insufficient free GPUs (need 8, most free 6)".
 */
public record Placement(List<WorkerSlot> slots, List<String> reasons) {
    public Placement {
        slots = List.copyOf(slots);
        reasons = List.copyOf(reasons);
    }

    public static Placement placed(List<WorkerSlot> slots) {
        return new Placement(slots, List.of());
    }

    public static Placement unschedulable(List<String> reasons) {
        return new Placement(List.of(), reasons);
    }

    public boolean isPlaced() {
        return !slots.isEmpty();
    }

    /** The reasons as one line for a job's status. */
    public String summary() {
        return reasons.isEmpty() ? "" : String.join("; ", reasons);
    }
}
