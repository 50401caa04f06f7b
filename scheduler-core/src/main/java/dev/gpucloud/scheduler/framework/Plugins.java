package dev.gpucloud.scheduler.framework;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.NodeState;
import java.util.List;

/**
 * The extension points of a scheduling cycle, after the Kubernetes scheduling framework: PreFilter
 * (the whole job, once), Filter (one host, with a reason), Score (one feasible host, 0..100,
 * weighted per profile), Reserve/Unreserve (hold or free; Unreserve is idempotent), Permit (the
 * whole gang, before anything is bound) and Bind (tell the hosts).
 */
public final class Plugins {

    private Plugins() {
    }

    public interface Plugin {
        String name();
    }

    public interface PreFilter extends Plugin {
        Status preFilter(CycleState state, PlacementRequest request);
    }

    public interface Filter extends Plugin {
        Status filter(CycleState state, PlacementRequest request, NodeState node);
    }

    public interface Score extends Plugin {
        /** 0 (worst) .. 100 (best) for putting one worker on this host. */
        int score(CycleState state, PlacementRequest request, NodeState node);

        /**
         * At most what {@link #score} gives any host for this request in this cycle: 100 unless the
         * plugin knows better. Lets a decision stop visiting hosts once none can beat the best.
         */
        default int maxScore(CycleState state, PlacementRequest request) {
            return 100;
        }
    }

    public interface Reserve extends Plugin {
        void reserve(CycleState state, Assignment assignment);

        /** Undoes {@link #reserve}; calling it twice, or for an assignment never reserved, does nothing. */
        void unreserve(CycleState state, Assignment assignment);
    }

    public interface Permit extends Plugin {
        Status permit(CycleState state, PlacementRequest request, List<Assignment> assignments);
    }

    public interface Bind extends Plugin {
        void bind(PlacementRequest request, List<Assignment> assignments);
    }
}
