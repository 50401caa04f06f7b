package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one operation changed: the records of the rows it wrote (the last one per job and allocation
 * stands), replayed into {@link Memory} once its transaction commits, with the events to tell watchers,
 * the GPUs a refused START showed others hold, and the pending reasons and requeue notes (text for the
 * API, not state). Nothing here is applied if the transaction fails.
 */
final class Changes {

    /** A START its host refused at {@code atMillis} because {@code heldBy} hold the GPUs it was placed on. */
    record Busy(Assignment refused, long atMillis, List<String> heldBy) {
    }

    final List<JobEvent> events = new ArrayList<>();
    final List<Busy> busy = new ArrayList<>();
    final Map<String, JobRecord> jobs = new LinkedHashMap<>();
    final Map<String, AllocationRecord> allocations = new LinkedHashMap<>();
    final Map<String, String> reasons = new HashMap<>();
    final Map<String, String> notes = new HashMap<>();

    void job(JobRecord record) {
        jobs.put(record.jobId(), record);
    }

    void allocation(AllocationRecord record) {
        allocations.put(record.allocationId(), record);
    }
}
