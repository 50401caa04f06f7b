package dev.gpucloud.scheduler.framework;

import dev.gpucloud.scheduler.cluster.Assignment;
import java.util.List;

/**
 * The outcome of one scheduling cycle: every worker's assignment (all or none), or why the job
 * does not fit, as counted reasons ("12 hosts: no RDMA fabric", "3 hosts: 6 of 8 A100 free, need 8").
 * UNRESOLVABLE means no host of this fleet could ever take the job.
 */
public record Decision(Status.Code code, List<Assignment> assignments, List<String> reasons) {

    public Decision {
        assignments = List.copyOf(assignments);
        reasons = List.copyOf(reasons);
    }

    public static Decision placed(List<Assignment> assignments) {
        return new Decision(Status.Code.SUCCESS, assignments, List.of());
    }

    public static Decision unschedulable(List<String> reasons) {
        return new Decision(Status.Code.UNSCHEDULABLE, List.of(), reasons);
    }

    public static Decision unresolvable(String reason) {
        return new Decision(Status.Code.UNRESOLVABLE, List.of(), List.of(reason));
    }

    public boolean isPlaced() {
        return code == Status.Code.SUCCESS;
    }

    /** The reasons as one line, for a pending job's status. */
    public String summary() {
        return String.join("; ", reasons);
    }
}
