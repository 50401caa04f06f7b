package dev.gpucloud.scheduler.queue;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The pass with {@link Las}: same-class preemption of more-served jobs, and backfill over the head's GPUs. */
class SchedulingPassLasTest {

    /** Limits 600, 1,200, ... GPU-s; a minute of run before yielding; no starvation within these tests. */
    private static final Las LAS = new Las(600, 2, 10, 60_000, 10, Long.MAX_VALUE / 4);

    private final PlacementFramework framework = new PlacementFramework(Profile.defaults());
    private final SchedulingPass pass = new SchedulingPass(framework, 86_400);
    private final JobQueue queue = new JobQueue();
    private final List<RunningJob> running = new ArrayList<>();

    SchedulingPassLasTest() {
        queue.setLas(LAS);
    }

    private QueuedJob job(String id, PriorityClass p, int gpus, double attained, boolean yields) {
        PlacementRequest r = new PlacementRequest(id, "t", 0, 1, gpus, null, 0, 0, 0, Set.of(), 0, false, false,
                null, 0, null, Set.of(), p);
        return new QueuedJob(id, "t", p, queue.nextSeq(), r, 0, NOW, attained, NOW, yields);
    }

    /** A job that has run {@code ranSeconds} on {@code gpus} GPUs and holds them now. */
    private void run(Fleet fleet, String id, int gpus, long ranSeconds, boolean yields) {
        QueuedJob j = job(id, PriorityClass.NORMAL, gpus, 0, yields);
        var d = framework.place(fleet, j.request(), NOW);
        assertThat(d.isPlaced()).isTrue();
        running.add(new RunningJob(id, "t", PriorityClass.NORMAL, gpus * 1000L, NOW - ranSeconds * 1000,
                NOW + 3_600_000, NOW - ranSeconds * 1000, false,
                d.assignments().stream().map(Assignment::allocationId).toList(), 0, yields));
        queue.charge("t", gpus * 1000L, 0);
    }

    @Test
    void aNewJobPreemptsTheMostServedYieldingJobOfItsClass() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "long", 4, 3600, true); // 14,400 GPU-s
        run(fleet, "medium", 2, 1800, true); // 3,600 GPU-s
        run(fleet, "pinned", 2, 7200, false); // more served, but it cannot resume from a checkpoint
        queue.enqueue(job("new", PriorityClass.NORMAL, 4, 0, true));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.placed()).isEmpty();
        assertThat(r.preemptions()).singleElement().satisfies(p -> {
            assertThat(p.preemptor().jobId()).isEqualTo("new");
            assertThat(p.victims()).extracting(RunningJob::jobId).containsExactly("long");
        });
        assertThat(r.waiting().get("new")).contains("received more GPU service");
        assertThat(fleet.assignments()).hasSize(3); // nothing moved yet: the victim checkpoints first
    }

    @Test
    void aJobInItsFirstMinuteOrAsServedAsTheQueuedOneKeepsItsGpus() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "just-started", 8, 30, true); // 240 GPU-s, under a minute
        queue.enqueue(job("new", PriorityClass.NORMAL, 1, 0, true));
        assertThat(pass.run(fleet, queue, running, Set.of(), NOW).preemptions()).isEmpty();

        Fleet other = new Fleet();
        host("h").add(other);
        running.clear();
        queue.remove("new");
        run(other, "level-1", 8, 100, true); // 800 GPU-s: level 1
        queue.enqueue(job("also-level-1", PriorityClass.NORMAL, 1, 700, true));
        assertThat(pass.run(other, queue, running, Set.of(), NOW).preemptions()).isEmpty();
        queue.enqueue(job("level-0", PriorityClass.NORMAL, 1, 0, true));
        PassResult r = pass.run(other, queue, running, Set.of(), NOW);
        assertThat(r.preemptions()).singleElement().satisfies(p -> assertThat(p.preemptor().jobId()).isEqualTo("level-0"));
    }

    @Test
    void severalQueuedJobsPreemptDifferentVictimsInOnePass() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        for (int i = 0; i < 4; i++) {
            run(fleet, "old-" + i, 2, 3600 * (i + 1), true);
        }
        queue.enqueue(job("a", PriorityClass.NORMAL, 2, 0, true));
        queue.enqueue(job("b", PriorityClass.NORMAL, 2, 0, true));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.preemptions()).hasSize(2);
        assertThat(r.preemptions().get(0).victims()).extracting(RunningJob::jobId).containsExactly("old-3");
        assertThat(r.preemptions().get(1).victims()).extracting(RunningJob::jobId).containsExactly("old-2");
    }

    @Test
    void aYieldingJobMayBackfillOverTheHeadsReservationAndAPinnedOneMayNot() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "pinned", 6, 30, false); // the head can only wait for it to end
        queue.enqueue(job("head", PriorityClass.NORMAL, 8, 0, true)); // the whole host, once "pinned" ends
        // served more than the head, so behind it; 2 GPUs are free, but the head's reservation needs them
        queue.enqueue(job("small-pinned", PriorityClass.NORMAL, 2, 700, false));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.reservedFor()).isEqualTo("head");
        assertThat(r.placed()).isEmpty();
        assertThat(r.waiting().get("small-pinned")).contains("would delay the reserved start of head");

        queue.remove("small-pinned");
        queue.enqueue(job("small-yielding", PriorityClass.NORMAL, 2, 700, true));
        PassResult again = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(again.placed()).extracting(p -> p.job().jobId()).containsExactly("small-yielding");
    }

    @Test
    void withLasOffNothingOfTheClassIsPreempted() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "long", 8, 36_000, true);
        queue.setLas(Las.OFF);
        queue.enqueue(job("new", PriorityClass.NORMAL, 1, 0, true));
        assertThat(pass.run(fleet, queue, running, Set.of(), NOW).preemptions()).isEmpty();
    }
}
