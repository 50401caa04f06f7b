package dev.gpucloud.scheduler.lifecycle;

import static dev.gpucloud.contracts.events.JobState.CANCELLED;
import static dev.gpucloud.contracts.events.JobState.CHECKPOINTING;
import static dev.gpucloud.contracts.events.JobState.FAILED;
import static dev.gpucloud.contracts.events.JobState.PENDING;
import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.contracts.events.JobState.SCHEDULED;
import static dev.gpucloud.contracts.events.JobState.SUCCEEDED;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.exited;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.lost;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.running;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.starting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.lifecycle.GangSettlement.Verdict;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A gang moves as a whole: what its workers' news does to a placed job. */
class GangSettlementTest {

    private static final Verdict UNCHANGED = new Verdict.Unchanged();
    private static final Verdict SUCCEEDS = new Verdict.Succeeded();
    private static final Verdict RUNS = new Verdict.Running();

    private static Verdict lostWorker(int rank, String node) {
        return new Verdict.WorkerLost(rank, node);
    }

    private static Verdict failedWorker(int rank, int exitCode) {
        return new Verdict.WorkerFailed(rank, exitCode);
    }

    /** name, the job's state, how many workers it runs, its current attempt's workers, the verdict. */
    static Stream<Arguments> cases() {
        return Stream.of(
                // a lost worker requeues the gang
                Arguments.of("a worker lost while the other runs requeues the gang", RUNNING, 2,
                        List.of(running(0, "h1"), lost(1, "h2")), lostWorker(1, "h2")),
                Arguments.of("a worker lost before the gang ran requeues it", SCHEDULED, 2,
                        List.of(starting(0, "h1"), lost(1, "h2")), lostWorker(1, "h2")),
                Arguments.of("a worker lost while the job checkpoints requeues it", CHECKPOINTING, 2,
                        List.of(lost(0, "h1"), running(1, "h2")), lostWorker(0, "h1")),
                Arguments.of("a lost worker wins over a failed one", RUNNING, 3,
                        List.of(exited(0, "h1", 1), running(1, "h2"), lost(2, "h3")), lostWorker(2, "h3")),
                Arguments.of("a lost worker wins over all the others having exited 0", RUNNING, 2,
                        List.of(exited(0, "h1", 0), lost(1, "h2")), lostWorker(1, "h2")),
                Arguments.of("of two lost workers the lowest rank is named, whatever the order", RUNNING, 3,
                        List.of(lost(2, "h3"), running(0, "h1"), lost(1, "h2")), lostWorker(1, "h2")),
                // a failed exit ends the attempt
                Arguments.of("a worker that exits non-zero ends the attempt", RUNNING, 2,
                        List.of(running(0, "h1"), exited(1, "h2", 3)), failedWorker(1, 3)),
                Arguments.of("an exit without a code counts as failure, code -1", RUNNING, 1,
                        List.of(exited(0, "h1", null)), failedWorker(0, -1)),
                Arguments.of("a worker failing before the gang ran ends the attempt", SCHEDULED, 2,
                        List.of(starting(0, "h1"), exited(1, "h2", 127)), failedWorker(1, 127)),
                Arguments.of("a worker failing while the job checkpoints ends the attempt", CHECKPOINTING, 2,
                        List.of(exited(0, "h1", 137), running(1, "h2")), failedWorker(0, 137)),
                Arguments.of("a failure wins over the others having exited 0", RUNNING, 3,
                        List.of(exited(0, "h1", 0), exited(1, "h2", 0), exited(2, "h3", 2)), failedWorker(2, 2)),
                Arguments.of("of two failed workers the lowest rank is named, whatever the order", RUNNING, 3,
                        List.of(exited(2, "h3", 137), exited(0, "h1", 0), exited(1, "h2", 1)), failedWorker(1, 1)),
                // every worker exited 0
                Arguments.of("every worker exited 0: the job succeeds", RUNNING, 2,
                        List.of(exited(0, "h1", 0), exited(1, "h2", 0)), SUCCEEDS),
                Arguments.of("a single worker that exits 0 succeeds", RUNNING, 1, List.of(exited(0, "h1", 0)), SUCCEEDS),
                Arguments.of("a SCHEDULED job whose workers all exited 0 succeeds, not just runs", SCHEDULED, 2,
                        List.of(exited(0, "h1", 0), exited(1, "h2", 0)), SUCCEEDS),
                Arguments.of("a checkpointing job whose workers all exited 0 succeeds", CHECKPOINTING, 2,
                        List.of(exited(0, "h1", 0), exited(1, "h2", 0)), SUCCEEDS),
                // every worker of a SCHEDULED job started
                Arguments.of("every worker started: the job runs", SCHEDULED, 2,
                        List.of(running(0, "h1"), running(1, "h2")), RUNS),
                Arguments.of("one started and one already exited 0: the job runs", SCHEDULED, 2,
                        List.of(exited(0, "h1", 0), running(1, "h2")), RUNS),
                // waiting for more news
                Arguments.of("one of two started: the job waits", SCHEDULED, 2,
                        List.of(running(0, "h1"), starting(1, "h2")), UNCHANGED),
                Arguments.of("no worker started yet", SCHEDULED, 2,
                        List.of(starting(0, "h1"), starting(1, "h2")), UNCHANGED),
                Arguments.of("a RUNNING job whose workers run stays as it is", RUNNING, 2,
                        List.of(running(0, "h1"), running(1, "h2")), UNCHANGED),
                Arguments.of("one of two exited 0 while the other runs: the job waits", RUNNING, 2,
                        List.of(exited(0, "h1", 0), running(1, "h2")), UNCHANGED),
                Arguments.of("a checkpointing job whose workers run stays as it is", CHECKPOINTING, 2,
                        List.of(running(0, "h1"), running(1, "h2")), UNCHANGED),
                // counts against the job's worker count, not the rows at hand
                Arguments.of("a missing worker keeps a gang from succeeding", RUNNING, 3,
                        List.of(exited(0, "h1", 0), exited(1, "h2", 0)), UNCHANGED),
                Arguments.of("a missing worker keeps a SCHEDULED gang from running", SCHEDULED, 3,
                        List.of(running(0, "h1"), running(1, "h2")), UNCHANGED),
                Arguments.of("no workers at all", SCHEDULED, 2, List.of(), UNCHANGED),
                // a job that is not placed ignores its workers
                Arguments.of("a succeeded job ignores a late loss", SUCCEEDED, 2,
                        List.of(exited(0, "h1", 0), lost(1, "h2")), UNCHANGED),
                Arguments.of("a failed job ignores a late failure", FAILED, 2,
                        List.of(exited(0, "h1", 1), exited(1, "h2", 1)), UNCHANGED),
                Arguments.of("a cancelled job ignores its workers exiting 0", CANCELLED, 2,
                        List.of(exited(0, "h1", 0), exited(1, "h2", 0)), UNCHANGED),
                Arguments.of("a requeued job ignores its old workers", PENDING, 2,
                        List.of(lost(0, "h1"), exited(1, "h2", 1)), UNCHANGED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void settles(String name, JobState state, int workers, List<WorkerOutcome> outcomes, Verdict expected) {
        assertThat(GangSettlement.settle(state, workers, outcomes)).isEqualTo(expected);
    }

    @Test
    void a_job_runs_at_least_one_worker() {
        assertThatThrownBy(() -> GangSettlement.settle(RUNNING, 0, List.of()))
                .hasMessageContaining("workers must be >= 1");
    }

    @Test
    void only_an_exited_worker_has_an_exit_code() {
        assertThatThrownBy(() -> new WorkerOutcome(0, "h1", WorkerOutcome.Phase.LOST, 1))
                .hasMessageContaining("only an exited worker has an exit code");
    }
}
