package dev.gpucloud.scheduler.state;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.queue.QueuedJob;
import dev.gpucloud.scheduler.queue.RunningJob;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the scheduler holds in memory about its work, changed only by replaying records: where a job
 * stands now ({@link JobRecord}) and whether an allocation holds its GPUs ({@link AllocationRecord}), each
 * built from the row a transaction committed. The live scheduler replays the rows of each operation once
 * they commit; a start or a takeover replays every open row read back from the database. Both go through
 * {@link #replay}, and a record says where its job or allocation stands, not what changed, so replaying
 * the last record of each gives the state that replaying the whole history gave: what a restart rebuilds
 * cannot differ from what the scheduler held before it.
 *
 * <p>The queue and the fleet are the placement code's own ({@link JobQueue}, {@link Fleet}); this class
 * keeps them in line with the records, together with the running jobs (and their tenants' charges), the
 * allocations known to have started, and the jobs asked to checkpoint before they stop.
 */
public final class SchedulerState {

    /** Where a job stands, as its row says. */
    public sealed interface JobRecord {
        String jobId();

        /** Waiting in the queue (new, or requeued to resume), with its place in line. */
        record Queued(QueuedJob entry) implements JobRecord {
            public String jobId() {
                return entry.jobId();
            }
        }

        /**
         * Placed: SCHEDULED, RUNNING or CHECKPOINTING on its current attempt's allocations. {@code stop} is set
         * while it is asked to checkpoint and then stop (null otherwise); {@code timeLimitAtMillis} is when it
         * reaches its time limit if it keeps running ({@code TimeLimit#reachedAtMillis}; Long.MAX_VALUE: never).
         */
        record Placed(RunningJob job, Stop stop, long timeLimitAtMillis) implements JobRecord {
            /** A placed job without a time limit. */
            public Placed(RunningJob job, Stop stop) {
                this(job, stop, Long.MAX_VALUE);
            }

            public String jobId() {
                return job.jobId();
            }
        }

        /** SUCCEEDED, FAILED or CANCELLED. */
        record Ended(String jobId) implements JobRecord {
        }

        /**
         * WAITING_FOR_DEPENDENCIES: out of the queue until the jobs (or arrays) {@code after} names have ended as
         * it asks.
         */
        record Waiting(String jobId, List<String> after) implements JobRecord {
            public Waiting {
                after = List.copyOf(after);
            }
        }
    }

    /** Whether an allocation holds its GPUs, as its row says. */
    public sealed interface AllocationRecord {
        String allocationId();

        /** STARTING ({@code started} false) or RUNNING: its GPUs are taken. */
        record Held(Assignment assignment, boolean started) implements AllocationRecord {
            public String allocationId() {
                return assignment.allocationId();
            }
        }

        /** EXITED or LOST: its GPUs are free. */
        record Released(String allocationId) implements AllocationRecord {
        }
    }

    /**
     * A job asked to checkpoint and then stop: why, by when (after which it is stopped anyway), the job it
     * makes room for (a preemptor, or null), and whether the stop {@code ends} the job (FAILED: it reached its
     * time limit) rather than requeueing it to resume.
     */
    public record Stop(String reason, long deadlineMillis, String preemptor, boolean ends) {

        /** A stop that requeues the job (a preemption, a spot reclaim, a drain). */
        public Stop(String reason, long deadlineMillis, String preemptor) {
            this(reason, deadlineMillis, preemptor, false);
        }

        /** A stop that ends the job: its time limit was reached. */
        public static Stop ending(String reason, long deadlineMillis, String preemptor) {
            return new Stop(reason, deadlineMillis, preemptor, true);
        }
    }

    private final Fleet fleet;
    private final JobQueue queue;
    private final Map<String, RunningJob> running = new HashMap<>();
    private final Map<String, Stop> stopping = new HashMap<>();
    /** When each placed job with a time limit reaches it, if it keeps running. */
    private final Map<String, Long> timeLimitAt = new HashMap<>();
    private final Set<String> started = new HashSet<>();
    /** Jobs waiting for their dependencies: what each waits for, and who waits for each dependency id. */
    private final Map<String, List<String>> waiting = new HashMap<>();
    private final Map<String, Set<String>> waitersOf = new HashMap<>();
    /** Waiting jobs to look at again: a job (or array element) they wait for ended, or a takeover came. */
    private final Set<String> due = new HashSet<>();

    public SchedulerState(Fleet fleet, JobQueue queue) {
        this.fleet = fleet;
        this.queue = queue;
    }

    /** Brings the job in line with its record. */
    public void replay(JobRecord record) {
        String id = record.jobId();
        unwait(id);
        if (record instanceof JobRecord.Waiting w) {
            waiting.put(id, w.after());
            w.after().forEach(d -> waitersOf.computeIfAbsent(d, k -> new HashSet<>()).add(id));
        } else if (record instanceof JobRecord.Ended) {
            dueAfter(id);
            String array = Dependencies.arrayOf(id);
            if (array != null) {
                dueAfter(array);
            }
        }
        if (record instanceof JobRecord.Queued q) {
            untrack(id);
            stopping.remove(id);
            timeLimitAt.remove(id);
            queue.remove(id); // a requeued job's entry is the new attempt's; its seq keeps its place
            queue.enqueue(q.entry());
        } else if (record instanceof JobRecord.Placed p) {
            queue.remove(id);
            track(p.job());
            if (p.stop() != null) {
                stopping.put(id, p.stop());
            } else {
                stopping.remove(id);
            }
            if (p.timeLimitAtMillis() != Long.MAX_VALUE) {
                timeLimitAt.put(id, p.timeLimitAtMillis());
            } else {
                timeLimitAt.remove(id);
            }
        } else { // ended, or waiting for its dependencies: holds nothing, waits in no queue
            untrack(id);
            stopping.remove(id);
            timeLimitAt.remove(id);
            queue.remove(id);
        }
    }

    /**
     * Brings the allocation in line with its record: its GPUs taken or free. Returns null, or why a held
     * allocation could not be taken in (its host no longer has those GPUs, or another allocation holds them):
     * such a row is left out, and the others go on, so that one row cannot stall a start, a takeover or a
     * standby's follow. Its host's agent still reports it running, and reconciliation holds it from there.
     */
    public String replay(AllocationRecord record) {
        if (record instanceof AllocationRecord.Held h) {
            try {
                fleet.reserve(h.assignment());
            } catch (IllegalStateException e) {
                return e.getMessage();
            }
            if (h.started()) {
                started.add(h.allocationId());
            } else {
                started.remove(h.allocationId());
            }
        } else {
            fleet.unreserve(record.allocationId());
            started.remove(record.allocationId());
        }
        return null;
    }

    private void unwait(String jobId) {
        List<String> after = waiting.remove(jobId);
        if (after != null) {
            for (String d : after) {
                Set<String> waiters = waitersOf.get(d);
                if (waiters != null && waiters.remove(jobId) && waiters.isEmpty()) {
                    waitersOf.remove(d);
                }
            }
        }
        due.remove(jobId);
    }

    private void dueAfter(String dependency) {
        Set<String> waiters = waitersOf.get(dependency);
        if (waiters != null) {
            due.addAll(waiters);
        }
    }

    /** The jobs waiting for their dependencies. */
    public Set<String> waiting() {
        return Collections.unmodifiableSet(waiting.keySet());
    }

    /** Marks every waiting job to be looked at again (after a takeover: what ended meanwhile is not replayed). */
    public void allWaitingDue() {
        due.addAll(waiting.keySet());
    }

    /** Whether some waiting job is to be looked at again. */
    public boolean anyDue() {
        return !due.isEmpty();
    }

    /** Marks these jobs, if they still wait, to be looked at again (a look that failed). */
    public void markDue(java.util.Collection<String> jobIds) {
        jobIds.stream().filter(waiting::containsKey).forEach(due::add);
    }

    /** At most {@code max} of the waiting jobs to look at again, which it forgets. */
    public List<String> takeDue(int max) {
        List<String> out = due.stream().sorted().limit(max).toList();
        out.forEach(due::remove);
        return out;
    }

    public JobQueue queue() {
        return queue;
    }

    public Fleet fleet() {
        return fleet;
    }

    /** The placed jobs, as backfill and preemption see them. */
    public Collection<RunningJob> running() {
        return Collections.unmodifiableCollection(running.values());
    }

    public Optional<RunningJob> runningJob(String jobId) {
        return Optional.ofNullable(running.get(jobId));
    }

    /** Whether the allocation is known to have started (RUNNING), not only placed. */
    public boolean started(String allocationId) {
        return started.contains(allocationId);
    }

    public Optional<Stop> stop(String jobId) {
        return Optional.ofNullable(stopping.get(jobId));
    }

    /** The placed jobs asked to checkpoint and then stop. */
    public Set<String> stopping() {
        return Collections.unmodifiableSet(stopping.keySet());
    }

    /** Jobs asked to checkpoint whose deadline has come: they are stopped now, checkpoint or not. */
    public List<String> overdue(long nowMillis) {
        return stopping.entrySet().stream().filter(e -> e.getValue().deadlineMillis() <= nowMillis)
                .map(Map.Entry::getKey).sorted().toList();
    }

    /**
     * Placed jobs that reached their time limit by {@code nowMillis} and are not being stopped for it yet (one
     * checkpointing for another reason, such as a preemption, is among them: the limit ends it instead).
     */
    public List<String> pastTimeLimit(long nowMillis) {
        return timeLimitAt.entrySet().stream().filter(e -> e.getValue() <= nowMillis)
                .filter(e -> stopping.get(e.getKey()) == null || !stopping.get(e.getKey()).ends())
                .map(Map.Entry::getKey).sorted().toList();
    }

    /**
     * Queued jobs whose preemptions are under way: some job still checkpoints to make room for them, so a
     * pass picks no new victims for them.
     */
    public Set<String> preempting() {
        Set<String> preemptors = new HashSet<>();
        stopping.values().forEach(s -> {
            if (s.preemptor() != null) {
                preemptors.add(s.preemptor());
            }
        });
        return preemptors;
    }

    private void track(RunningJob r) {
        RunningJob old = running.put(r.jobId(), r);
        if (old != null) {
            queue.release(old.tenant(), old.gpuMilli(), 0);
        }
        queue.charge(r.tenant(), r.gpuMilli(), 0);
    }

    private void untrack(String jobId) {
        RunningJob r = running.remove(jobId);
        if (r != null) {
            queue.release(r.tenant(), r.gpuMilli(), 0);
        }
    }
}
