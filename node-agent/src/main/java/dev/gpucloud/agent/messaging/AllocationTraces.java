package dev.gpucloud.agent.messaging;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The span each running allocation was started in, as a traceparent: what its later events (usage each period, its
 * exit) are published under, so they stay in its job's trace (docs/operations.md, "Traces"). Kept in memory only: an
 * agent restarted while an allocation runs publishes that allocation's later events outside any trace.
 */
@ApplicationScoped
public class AllocationTraces {

    /** More allocations than a host can run; past it (an agent of many simulated hosts) new ones go untraced. */
    static final int LIMIT = 100_000;

    private final Map<String, String> started = new ConcurrentHashMap<>();

    /** Notes the span an allocation was started in; null forgets it. */
    public void started(String allocationId, String traceparent) {
        if (traceparent == null) {
            started.remove(allocationId);
        } else if (started.size() < LIMIT || started.containsKey(allocationId)) {
            started.put(allocationId, traceparent);
        }
    }

    /** The span {@code allocationId} was started in; null when unknown. */
    public String of(String allocationId) {
        return allocationId == null ? null : started.get(allocationId);
    }

    /** Its last event is out: nothing more of it is traced. */
    public void ended(String allocationId) {
        started.remove(allocationId);
    }

    int size() {
        return started.size();
    }
}
