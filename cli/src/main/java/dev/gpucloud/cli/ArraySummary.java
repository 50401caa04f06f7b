package dev.gpucloud.cli;

import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobState;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** How far an array has got: its elements counted by state, those still at work first, then those that ended. */
final class ArraySummary {

    /** The order states are told in: running before queued before waiting, then the ends. */
    static final List<JobState> ORDER = List.of(JobState.RUNNING, JobState.CHECKPOINTING, JobState.SCHEDULED,
            JobState.PENDING, JobState.WAITING_FOR_DEPENDENCIES, JobState.SUCCEEDED, JobState.FAILED,
            JobState.CANCELLED);

    private ArraySummary() {
    }

    /** Each state that some element is in, with how many, in {@link #ORDER} (any other state last). */
    static Map<JobState, Integer> count(List<Job> elements) {
        Map<JobState, Integer> counts = new EnumMap<>(JobState.class);
        elements.forEach(j -> counts.merge(j.getState(), 1, Integer::sum));
        Map<JobState, Integer> ordered = new LinkedHashMap<>();
        ORDER.stream().filter(counts::containsKey).forEach(s -> ordered.put(s, counts.get(s)));
        counts.forEach(ordered::putIfAbsent);
        return ordered;
    }

    /** "arr-…: 16 elements: 3 RUNNING, 10 PENDING, 2 SUCCEEDED, 1 FAILED". */
    static String line(String arrayId, List<Job> elements) {
        String states = count(elements).entrySet().stream().map(e -> e.getValue() + " " + e.getKey().name())
                .collect(Collectors.joining(", "));
        return arrayId + ": " + elements.size() + (elements.size() == 1 ? " element" : " elements")
                + (states.isEmpty() ? "" : ": " + states);
    }
}
