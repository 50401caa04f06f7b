package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.JobEvent;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** Who is watching which job in this process (WatchJob streams); told of each committed change. */
@ApplicationScoped
public class JobWatchers {

    private final Map<String, List<Consumer<JobEvent>>> watchers = new ConcurrentHashMap<>();
    private final Map<Consumer<JobEvent>, Runnable> ends = new ConcurrentHashMap<>();

    /**
     * Registers a listener; the returned Runnable unregisters it. {@code onEnd} runs should this process stop
     * seeing changes (it lost the lead): the stream should move to the leader.
     */
    public Runnable watch(String jobId, Consumer<JobEvent> listener, Runnable onEnd) {
        watchers.computeIfAbsent(jobId, k -> new CopyOnWriteArrayList<>()).add(listener);
        ends.put(listener, onEnd);
        return () -> {
            ends.remove(listener);
            watchers.computeIfPresent(jobId, (k, list) -> {
                list.remove(listener);
                return list.isEmpty() ? null : list;
            });
        };
    }

    /** This process no longer sees changes: ends every stream (each unregisters itself). */
    void endAll() {
        List.copyOf(ends.values()).forEach(Runnable::run);
    }

    void publish(JobEvent event) {
        List<Consumer<JobEvent>> list = watchers.get(event.jobId());
        if (list != null) {
            list.forEach(l -> l.accept(event));
        }
    }

    public int watching() {
        return watchers.values().stream().mapToInt(List::size).sum();
    }
}
