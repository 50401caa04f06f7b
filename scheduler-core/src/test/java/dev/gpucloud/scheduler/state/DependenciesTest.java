package dev.gpucloud.scheduler.state;

import static dev.gpucloud.contracts.events.JobState.CANCELLED;
import static dev.gpucloud.contracts.events.JobState.FAILED;
import static dev.gpucloud.contracts.events.JobState.PENDING;
import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.contracts.events.JobState.SUCCEEDED;
import static dev.gpucloud.contracts.events.JobState.WAITING_FOR_DEPENDENCIES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.JobSpec.Dependency;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.state.Dependencies.Standing;
import dev.gpucloud.scheduler.state.Dependencies.Verdict;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** When a job that runs after others may run, may never run, or waits; and who is looked at again when. */
class DependenciesTest {

    private static Dependency success(String id) {
        return new Dependency(id, false);
    }

    private static Dependency any(String id) {
        return new Dependency(id, true);
    }

    private static Standing s(String id, dev.gpucloud.contracts.events.JobState state) {
        return new Standing(id, state, state == FAILED ? "worker 0 exited 1 (not retried)" : "");
    }

    @Test
    void aJobThatSucceededMeetsBothKindsOfDependency() {
        Map<String, List<Standing>> standing = Map.of("job-a", List.of(s("job-a", SUCCEEDED)));
        assertThat(Dependencies.evaluate(List.of(success("job-a")), standing)).isInstanceOf(Verdict.Met.class);
        assertThat(Dependencies.evaluate(List.of(any("job-a")), standing)).isInstanceOf(Verdict.Met.class);
    }

    @Test
    void aFailedOrCancelledJobMeetsOnlyAnAfterAnyDependencyAndSaysWhyTheOtherNeverRuns() {
        for (var state : List.of(FAILED, CANCELLED)) {
            Map<String, List<Standing>> standing = Map.of("job-a", List.of(s("job-a", state)));
            assertThat(Dependencies.evaluate(List.of(any("job-a")), standing)).isInstanceOf(Verdict.Met.class);
            Verdict v = Dependencies.evaluate(List.of(success("job-a")), standing);
            assertThat(v).isInstanceOf(Verdict.Never.class);
            assertThat(((Verdict.Never) v).reason()).contains("dependency job-a ended " + state)
                    .contains("to run after its success");
        }
        Verdict v = Dependencies.evaluate(List.of(success("job-a")), Map.of("job-a", List.of(s("job-a", FAILED))));
        assertThat(((Verdict.Never) v).reason()).as("the dependency's own reason").contains("exited 1");
    }

    @Test
    void aJobNotEndedYetKeepsItWaitingAndTheReasonNamesItsStateAndWhatItWaitsFor() {
        Verdict v = Dependencies.evaluate(List.of(success("job-a"), any("job-b")), Map.of(
                "job-a", List.of(s("job-a", RUNNING)), "job-b", List.of(s("job-b", PENDING))));
        assertThat(v).isInstanceOf(Verdict.Waiting.class);
        assertThat(((Verdict.Waiting) v).reason())
                .isEqualTo("waiting for job-a (RUNNING) to succeed, job-b (PENDING) to end");
    }

    @Test
    void anArrayDependencyCountsEveryElementAndOneFailedElementIsEnoughToNeverRun() {
        List<Standing> elements = List.of(s("arr-x-0", SUCCEEDED), s("arr-x-1", RUNNING), s("arr-x-2", SUCCEEDED));
        Verdict waiting = Dependencies.evaluate(List.of(success("arr-x")), Map.of("arr-x", elements));
        assertThat(((Verdict.Waiting) waiting).reason()).isEqualTo("waiting for arr-x (2 of 3 ended) to succeed");

        List<Standing> oneFailed = List.of(s("arr-x-0", SUCCEEDED), s("arr-x-1", FAILED), s("arr-x-2", RUNNING));
        Verdict never = Dependencies.evaluate(List.of(success("arr-x")), Map.of("arr-x", oneFailed));
        assertThat(((Verdict.Never) never).reason()).startsWith("element arr-x-1 of dependency arr-x ended FAILED");
        assertThat(Dependencies.evaluate(List.of(any("arr-x")), Map.of("arr-x", oneFailed)))
                .as("after any: still waits for the running element").isInstanceOf(Verdict.Waiting.class);
    }

    @Test
    void aDependencyThatNamesNothingNeverRuns() {
        assertThat(Dependencies.evaluate(List.of(success("job-gone")), Map.of())).isInstanceOf(Verdict.Never.class);
    }

    @Test
    void anElementsArrayIsReadFromItsIdAndOtherIdsHaveNone() {
        assertThat(Dependencies.arrayOf("arr-1a2b3c4d5e6f-15")).isEqualTo("arr-1a2b3c4d5e6f");
        assertThat(Dependencies.arrayOf("job-1a2b3c4d5e6f")).isNull();
        assertThat(Dependencies.arrayOf("arr-")).isNull();
    }

    private static JobRow waiting(String reason) {
        JobRun run = JobRun.restore("job-c", 1000, new RetryPolicy(0, Set.of()), WAITING_FOR_DEPENDENCIES, 0, 0, 0,
                null, Long.MIN_VALUE, Long.MIN_VALUE, 0, 0);
        return new JobRow("tenant-a", 1, run, reason, null, null);
    }

    @Test
    void metQueuesTheJobNeverCancelsItWithTheReasonAndWaitingOnlyStoresANewReason() {
        JobRow met = waiting("waiting for job-a (RUNNING) to succeed");
        JobCommands.Outcome o = JobCommands.dependencies(met, new Verdict.Met("job-a ended as asked"), 1_000);
        assertThat(met.state()).isEqualTo(PENDING);
        assertThat(o.effect()).isEqualTo(JobCommands.Effect.ANNOUNCE);
        assertThat(met.reason()).isEqualTo("waiting for a placement (job-a ended as asked)");

        JobRow never = waiting("waiting for job-a (RUNNING) to succeed");
        o = JobCommands.dependencies(never, new Verdict.Never("dependency job-a ended FAILED"), 1_000);
        assertThat(never.state()).isEqualTo(CANCELLED);
        assertThat(never.reason()).isEqualTo("dependency job-a ended FAILED");
        assertThat(o.effect()).isEqualTo(JobCommands.Effect.ANNOUNCE);

        JobRow still = waiting("waiting for job-a (PENDING) to succeed");
        o = JobCommands.dependencies(still, new Verdict.Waiting("waiting for job-a (RUNNING) to succeed"), 1_000);
        assertThat(still.state()).isEqualTo(WAITING_FOR_DEPENDENCIES);
        assertThat(o.effect()).as("a new reason is stored, not announced").isEqualTo(JobCommands.Effect.STORE);
        assertThat(JobCommands.dependencies(still, new Verdict.Waiting("waiting for job-a (RUNNING) to succeed"),
                1_000).effect()).isEqualTo(JobCommands.Effect.NONE);

        JobRow cancelled = waiting("waiting");
        JobCommands.cancel(cancelled, "cancelled by request", 1_000);
        assertThat(cancelled.state()).as("a waiting job can be cancelled").isEqualTo(CANCELLED);
        assertThat(JobCommands.dependencies(cancelled, new Verdict.Met("x"), 2_000).changed())
                .as("an ended job ignores its dependencies").isFalse();
    }

    @Test
    void theWaitersOfAJobOrOfAnArrayElementAreDueWhenItEndsAndNotBefore() {
        SchedulerState state = new SchedulerState(new Fleet(), new JobQueue());
        state.replay(new JobRecord.Waiting("job-c", List.of("job-a", "arr-x")));
        state.replay(new JobRecord.Waiting("job-d", List.of("job-a")));
        assertThat(state.waiting()).containsExactlyInAnyOrder("job-c", "job-d");
        assertThat(state.anyDue()).isFalse();
        assertThat(state.queue().size()).as("a waiting job is in no queue").isZero();

        state.replay(new JobRecord.Ended("job-b")); // nobody waits for it
        assertThat(state.anyDue()).isFalse();
        state.replay(new JobRecord.Ended("arr-x-3"));
        assertThat(state.takeDue(10)).containsExactly("job-c");
        state.replay(new JobRecord.Ended("job-a"));
        assertThat(state.takeDue(1)).containsExactly("job-c");
        assertThat(state.takeDue(10)).containsExactly("job-d");
        assertThat(state.takeDue(10)).isEmpty();

        state.replay(new JobRecord.Ended("job-c")); // cancelled: no longer waits, no longer due
        state.replay(new JobRecord.Ended("job-a"));
        assertThat(state.takeDue(10)).containsExactly("job-d");
        state.allWaitingDue();
        assertThat(state.takeDue(10)).containsExactly("job-d");
        state.markDue(List.of("job-d", "job-c"));
        assertThat(state.takeDue(10)).as("only jobs that still wait").containsExactly("job-d");
    }
}
