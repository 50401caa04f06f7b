package dev.gpucloud.scheduler.liveness;

import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The latest word from each host since the cluster model last took it in: when it was heard, and what its
 * agent runs. Telemetry arrives on the broker's threads, many times a second; it is only noted here, and
 * the scheduler's own thread takes it into the {@link Fleet} and the {@link AllocationReconciler} before it
 * next reads them ({@link #takeInto}). Only the newest word per host is kept.
 */
public final class HostReports {

    /** Heard at {@code atMillis}; {@code running} is what its agent runs (null: the agent does not say). */
    private record Heard(long atMillis, List<AllocationReport> running) {
    }

    private final Map<String, Heard> heard = new ConcurrentHashMap<>();

    /** Notes that host {@code nodeId} was heard at {@code atMillis}, running {@code running} (null: not said). */
    public void heard(String nodeId, long atMillis, List<AllocationReport> running) {
        heard.merge(nodeId, new Heard(atMillis, running), (a, b) -> a.atMillis() > b.atMillis() ? a : b);
    }

    /** When the host was last heard of, if that word is still waiting to be taken in. */
    public Long waitingSince(String nodeId) {
        Heard h = heard.get(nodeId);
        return h == null ? null : h.atMillis();
    }

    /**
     * Takes what was heard into the fleet (the host is alive) and the reconciler (what it runs). A word from a
     * host the fleet does not know yet is kept until its inventory is read (after a start, inventory is read
     * from its beginning while telemetry flows already), unless it is older than {@code forgetBeforeMillis}:
     * a key no inventory names for that long is dropped, so stray keys cannot pile up. A newer word that
     * comes meanwhile stays for the next time.
     */
    public void takeInto(Fleet fleet, AllocationReconciler reconciler, long forgetBeforeMillis) {
        for (String nodeId : List.copyOf(heard.keySet())) {
            Heard h = heard.get(nodeId);
            if (h == null) {
                continue;
            }
            if (fleet.node(nodeId).isEmpty()) {
                if (h.atMillis() < forgetBeforeMillis) {
                    heard.remove(nodeId, h);
                }
                continue;
            }
            heard.remove(nodeId, h);
            fleet.heard(nodeId, h.atMillis());
            if (h.running() != null) {
                reconciler.report(nodeId, h.atMillis(), h.running());
            }
        }
    }
}
