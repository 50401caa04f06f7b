package dev.gpucloud.scheduler.state;

import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase.EXITED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CheckpointPolicy;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.scheduler.Fixtures;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase;
import dev.gpucloud.scheduler.liveness.AllocationReconciler;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The commands hosts are sent, built from rows. */
class NodeCommandsTest {

    private static final Instant NOW = Instant.ofEpochMilli(200_000);
    private static final JobSpec SPEC = new JobSpec("train", 2, 1, null, 0, 0, 0, List.of(), 0, null, null, null,
            new CheckpointPolicy(60, "s3://ckpt"), 0, null, 0, List.of("python", "train.py"), Map.of("LR", "0.1"));

    private static JobRow job(int attempt, String resumeFrom) {
        JobRun run = JobRun.restore("job-a", 2000, new RetryPolicy(2, Set.of()), RUNNING, attempt, 0, 1, resumeFrom,
                resumeFrom == null ? Long.MIN_VALUE : 150_000, 100_000, 0, 0);
        return new JobRow("tenant-a", 2, run, "", null, null);
    }

    private static AllocationRow worker(int rank, String node, Phase phase) {
        return new AllocationRow("job-a-a2-r" + rank, "job-a", 2, rank, node, List.of(rank), null, -1, 1000, 0, 0,
                NOW, phase, null, null, null, null);
    }

    @Test
    void aStartCarriesWhatTheWorkerNeedsToJoinItsGangAndResume() {
        NodeCommand start = NodeCommands.start(job(2, "s3://ckpt/job-a/step-9"), SPEC, "s3://ckpt/job-a",
                worker(1, "n2", Phase.STARTING), "n1.example:29500", Instant.ofEpochMilli(230_000), false, NOW);

        assertThat(start.type()).isEqualTo(NodeCommandType.START);
        assertThat(start.commandId()).isEqualTo("job-a-a2-r1/start");
        assertThat(start.nodeId()).isEqualTo("n2");
        assertThat(start.rank()).isEqualTo(1);
        assertThat(start.worldSize()).isEqualTo(2);
        assertThat(start.masterAddr()).isEqualTo("n1.example:29500");
        assertThat(start.command()).containsExactly("python", "train.py");
        assertThat(start.env()).containsEntry("LR", "0.1");
        assertThat(start.resumeFrom()).isEqualTo("s3://ckpt/job-a/step-9");
        assertThat(start.deadline()).as("start by then or not at all").isEqualTo(Instant.ofEpochMilli(230_000));
        assertThat(start.milliGpu()).as("whole GPUs").isZero();
    }

    @Test
    void aStartCarriesTheJobsSecretVariablesToItsWorkerApartFromItsEnv() {
        JobSpec secret = new JobSpec("train", 2, 1, null, 0, 0, 0, List.of(), 0, null, null, null, null, 0, null, 0,
                List.of("python", "train.py"), Map.of("LR", "0.1"), Map.of("WANDB_API_KEY", "hunter2"));

        NodeCommand start = NodeCommands.start(job(2, null), secret, "/c", worker(0, "n1", Phase.STARTING),
                "n1:29500", null, false, NOW);

        assertThat(start.secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", "hunter2"));
        assertThat(start.env()).containsExactly(Map.entry("LR", "0.1"));
        assertThat(start.withEpoch(4).secretEnv()).as("fencing keeps them").containsKey("WANDB_API_KEY");
    }

    @Test
    void aStartSentAgainHasAnIdOfItsOwn() {
        NodeCommand again = NodeCommands.start(job(2, null), SPEC, "/c/job-a", worker(0, "n1", Phase.STARTING),
                "n1:29500", null, true, NOW);

        assertThat(again.commandId()).isEqualTo("job-a-a2-r0/start-200000");
        assertThat(again.deadline()).isNull();
    }

    @Test
    void aFractionAndAMigSliceAreNamedAsTheAgentRunsThem() {
        AllocationRow fraction = new AllocationRow("f-r0", "job-a", 2, 0, "n1", List.of(3), null, -1, 250, 0, 0, NOW,
                Phase.STARTING, null, null, null, null);
        AllocationRow mig = new AllocationRow("m-r0", "job-a", 2, 0, "n1", List.of(0), "1g.10gb", 4, 1000, 0, 0, NOW,
                Phase.STARTING, null, null, null, null);

        NodeCommand f = NodeCommands.start(job(2, null), SPEC, "/c", fraction, "n1:29500", null, false, NOW);
        NodeCommand m = NodeCommands.start(job(2, null), SPEC, "/c", mig, "n1:29500", null, false, NOW);

        assertThat(f.milliGpu()).isEqualTo(250);
        assertThat(f.migInstanceUuid()).isNull();
        assertThat(m.milliGpu()).isZero();
        assertThat(m.migInstanceUuid()).isEqualTo("1g.10gb@4");
    }

    @Test
    void checkpointsGoUnderTheSpecsLocationOrTheDefaultRoot() {
        assertThat(NodeCommands.checkpointDir("job-a", SPEC, "/var/ckpt")).isEqualTo("s3://ckpt/job-a");
        assertThat(NodeCommands.checkpointDir("job-a", Fixtures.mkJob(1, 1), "/var/ckpt")).isEqualTo("/var/ckpt/job-a");
        assertThat(NodeCommands.checkpointDir("job-a", null, "/var/ckpt")).as("an unreadable spec")
                .isEqualTo("/var/ckpt/job-a");
    }

    @Test
    void aGangMeetsAtRankZerosHostnameOnceTheFleetKnowsIt() {
        Fleet fleet = new Fleet();
        fleet.upsert(Fixtures.mkHost("n1", "A100", 8), 0);

        assertThat(NodeCommands.master(fleet, worker(0, "n1", Phase.STARTING))).isEqualTo("n1:29500");
        assertThat(NodeCommands.master(fleet, worker(0, "n9", Phase.STARTING))).as("not known: its id")
                .isEqualTo("n9:29500");
    }

    @Test
    void anOutcomeStopsOrAsksOnlyTheWorkersThatHoldGpus() {
        List<AllocationRow> workers = List.of(worker(0, "n1", Phase.RUNNING), worker(1, "n2", EXITED));
        JobRow job = job(2, null);

        List<NodeCommand> stops = NodeCommands.toWorkers(job, "/c",
                new JobCommands.Outcome(JobCommands.Effect.ANNOUNCE, true, 0, null), workers, NOW);
        List<NodeCommand> asks = NodeCommands.toWorkers(job, "/c",
                new JobCommands.Outcome(JobCommands.Effect.ANNOUNCE, false, 230_000, null), workers, NOW);
        List<NodeCommand> none = NodeCommands.toWorkers(job, "/c", JobCommands.Outcome.STORE, workers, NOW);

        assertThat(stops).extracting(NodeCommand::commandId).containsExactly("job-a-a2-r0/stop");
        assertThat(stops.get(0).type()).isEqualTo(NodeCommandType.STOP);
        assertThat(asks).extracting(NodeCommand::commandId).containsExactly("job-a-a2-r0/checkpoint-2-230000");
        assertThat(asks.get(0).deadline()).isEqualTo(Instant.ofEpochMilli(230_000));
        assertThat(asks.get(0).checkpointDir()).isEqualTo("/c");
        assertThat(none).isEmpty();
    }

    @Test
    void askedTwiceForTheSameDeadlineIsOneCommandButANewDeadlineIsAnother() {
        JobRow job = job(2, null);
        AllocationRow w = worker(0, "n1", Phase.RUNNING);

        assertThat(NodeCommands.checkpoint(job, "/c", w, 230_000, NOW).commandId())
                .isEqualTo(NodeCommands.checkpoint(job, "/c", w, 230_000, NOW.plusSeconds(5)).commandId())
                .isNotEqualTo(NodeCommands.checkpoint(job, "/c", w, 240_000, NOW).commandId());
    }

    @Test
    void reconciliationStopsWhatIsNotTheSchedulersAndAsksAboutItsOwn() {
        NodeCommand stop = NodeCommands.ask(new AllocationReconciler.Ask("x-a1-r0", "x", "t", "n1", List.of(2), true,
                "not an allocation of this scheduler"), 200_000);
        NodeCommand status = NodeCommands.ask(new AllocationReconciler.Ask("y-a1-r0", "y", "t", "n1", List.of(3),
                false, "no longer reported"), 200_000);

        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        assertThat(stop.commandId()).isEqualTo("x-a1-r0/stop-200000");
        assertThat(stop.reason()).isEqualTo("not an allocation of this scheduler");
        assertThat(status.type()).isEqualTo(NodeCommandType.STATUS);
        assertThat(status.gpuIndices()).containsExactly(3);
    }

    @Test
    void aStopSaysWhyWhenTheSchedulerLostTheWorker() {
        NodeCommand stop = NodeCommands.stop(worker(0, "n1", Phase.STARTING), "tenant-a",
                "host n1 silent for 60 s", NOW);

        assertThat(stop.reason()).isEqualTo("host n1 silent for 60 s");
        assertThat(stop.tenant()).isEqualTo("tenant-a");
        assertThat(stop.commandId()).isEqualTo("job-a-a2-r0/stop");
    }
}
