package dev.gpucloud.agent.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.Enrolment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Not a @QuarkusTest: the runner is plain Java, and these tests run real child processes (small bash scripts). */
class ProcessRunnerTest {

    static final String NODE = "gpu-host-1";
    static final String MIG_UUID = "MIG-11111111-2222-3333-4444-555555555555";

    @TempDir
    Path temp;

    private ProcessRunner runner;
    private int commands;
    private final List<Reports> reports = new ArrayList<>();

    static HostInventory host() {
        List<GpuDevice> gpus = List.of(
                new GpuDevice(0, "GPU-0", "A100-SXM4-40GB", 40960, "00000000:10:00.0", 0, false, List.of()),
                new GpuDevice(1, "GPU-1", "A100-SXM4-40GB", 40960, "00000000:20:00.0", 0, false, List.of()),
                new GpuDevice(2, "GPU-2", "A100-SXM4-40GB", 40960, "00000000:30:00.0", -1, true,
                        List.of(new MigInstance(1, "3g.20gb", MIG_UUID, 19968))));
        return new HostInventory(NODE, NODE, "p4d.24xlarge", "us-east-1a", CapacityType.SPOT, 8_784_000, 96_000,
                1_179_648, null, List.of(), gpus, List.of(), "nvml", Instant.now());
    }

    @BeforeEach
    void setUp() {
        runner = new ProcessRunner(List.of(host()), new RunnerSettings(temp.resolve("run"), Duration.ofMillis(200),
                Duration.ofMillis(500), "SIGUSR1", Duration.ofSeconds(5)), Clock.systemUTC());
    }

    @AfterEach
    void tearDown() {
        runner.close();
    }

    private NodeCommand start(String alloc, List<Integer> gpus, String mig, int milli, List<String> command,
            Map<String, String> env) {
        return new NodeCommand("c-" + (++commands), NodeCommandType.START, NODE, alloc, "job-" + alloc, "test-tenant", gpus,
                mig, milli, 1, 2, "10.0.0.1:29500", command, env, null, "/ckpt/job-" + alloc + "/step-7", null,
                Instant.now());
    }

    private NodeCommand bash(String alloc, List<Integer> gpus, String script) {
        return start(alloc, gpus, null, 0, List.of("bash", "-c", script), Map.of());
    }

    private NodeCommand mk(NodeCommandType type, String alloc) {
        return new NodeCommand("c-" + (++commands), type, NODE, alloc, "job-" + alloc, "test-tenant", List.of(), null, 0, 0, 0,
                null, List.of(), Map.of(), null, null, null, Instant.now());
    }

    private Reports handle(NodeCommand command) {
        Reports r = runner.handle(command);
        reports.add(r);
        return r;
    }

    private List<AllocationEvent> events(String alloc) {
        return reports.stream().flatMap(r -> r.allocationEvents().stream())
                .filter(e -> e.allocationId().equals(alloc)).toList();
    }

    private List<UsageEvent> usage(String alloc) {
        return reports.stream().flatMap(r -> r.usage().stream()).filter(u -> u.allocationId().equals(alloc)).toList();
    }

    private List<String> notes() {
        return reports.stream().flatMap(r -> r.notes().stream()).toList();
    }

    /** Ticks the runner as the agent does (more often) until {@code done} holds, at most 15 s. */
    private void tickUntil(Predicate<ProcessRunnerTest> done) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!done.test(this)) {
            assertThat(System.nanoTime()).as("still waiting; reports so far: %s", reports).isLessThan(until);
            Thread.sleep(20);
            reports.add(runner.advance());
        }
    }

    private AllocationEvent exited(String alloc) {
        return events(alloc).stream().filter(e -> e.type() == AllocationEventType.EXITED).findFirst().orElse(null);
    }

    private AllocationEvent lost(String alloc) {
        return events(alloc).stream().filter(e -> e.type() == AllocationEventType.LOST).findFirst().orElse(null);
    }

    private static void assertContiguous(List<UsageEvent> usage, Instant from, Instant to) {
        assertThat(usage).isNotEmpty();
        assertThat(usage.get(0).from()).isEqualTo(from);
        for (int i = 1; i < usage.size(); i++) {
            assertThat(usage.get(i).from()).as("interval %d starts where %d ended", i, i - 1)
                    .isEqualTo(usage.get(i - 1).to());
        }
        assertThat(usage.get(usage.size() - 1).to()).isEqualTo(to);
    }

    @Test
    void aStartRunsTheCommandWithItsGpusGangAndCheckpointEnvAndReportsItsExitCode() throws Exception {
        List<String> watched = new java.util.concurrent.CopyOnWriteArrayList<>();
        runner.watchOutput(new dev.gpucloud.agent.logs.OutputWatcher() {
            @Override
            public void started(dev.gpucloud.agent.logs.OutputSource source) {
                watched.add("started " + source.allocationId() + " rank " + source.rank() + " of " + source.jobId()
                        + " on " + source.nodeId() + ": " + temp.relativize(source.stdout()) + " "
                        + temp.relativize(source.stderr()));
            }

            @Override
            public void exited(String allocationId) {
                watched.add("exited " + allocationId);
            }
        });
        handle(start("a1", List.of(0, 1), null, 0, List.of("bash", "-c",
                "env | sort; echo to-stderr >&2; sleep 0.7; exit 3"), Map.of("MY_VAR", "x", "CUDA_VISIBLE_DEVICES", "7")));
        assertThat(events("a1")).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(AllocationEventType.STARTED);
            assertThat(e.detail()).contains("GPUs [0, 1] as A100-SXM4-40GB").contains("pid ");
        });
        tickUntil(t -> t.exited("a1") != null);
        AllocationEvent exit = exited("a1");
        assertThat(exit.exitCode()).isEqualTo(3);
        assertThat(exit.detail()).startsWith("exited 3 after");

        String log = Files.readString(temp.resolve("run/a1/" + ProcessRunner.LOG_FILE));
        assertThat(log).contains("CUDA_VISIBLE_DEVICES=0,1\n", "RANK=1\n", "WORLD_SIZE=2\n", "LOCAL_RANK=0\n",
                "MASTER_ADDR=10.0.0.1\n", "MASTER_PORT=29500\n", "GPUCLOUD_RESUME_FROM=/ckpt/job-a1/step-7\n",
                "GPUCLOUD_CHECKPOINT_DIR=" + temp.resolve("run/a1/checkpoints") + "\n", "MY_VAR=x\n",
                "GPUCLOUD_ALLOCATION_ID=a1\n").doesNotContain("to-stderr");
        // stderr has a file of its own, so that job.logs can tell the two apart
        assertThat(Files.readString(temp.resolve("run/a1/" + ProcessRunner.ERR_FILE))).isEqualTo("to-stderr\n");
        assertThat(watched).containsExactly("started a1 rank 1 of job-a1 on " + host().nodeId() + ": run/a1/"
                + ProcessRunner.LOG_FILE + " run/a1/" + ProcessRunner.ERR_FILE, "exited a1");

        List<UsageEvent> usage = usage("a1");
        assertContiguous(usage, events("a1").get(0).occurredAt(), exit.occurredAt());
        assertThat(usage).allSatisfy(u -> {
            assertThat(u.sku().code()).isEqualTo("A100-SXM4-40GB");
            assertThat(u.units()).isEqualTo(2);
            assertThat(u.capacityType()).isEqualTo(CapacityType.SPOT);
            assertThat(u.zone()).isEqualTo("us-east-1a");
        });
        assertThat(Duration.between(usage.get(0).from(), exit.occurredAt())).isGreaterThanOrEqualTo(Duration.ofMillis(700));
        assertThat(usage.size()).as("200 ms steps over at least 0.7 s").isGreaterThanOrEqualTo(4);
        assertThat(runner.running()).isEmpty();
    }

    @Test
    void theWorkerProcessSeesTheJobsSecretVariablesAndNoReportShowsThem() throws Exception {
        String secret = "hunter2-" + java.util.UUID.randomUUID();
        handle(start("s0", List.of(0), null, 0, List.of("bash", "-c",
                "test \"$WANDB_API_KEY\" = '" + secret + "' && echo secret-seen; echo plain=$MODE"),
                Map.of("MODE", "fast")).withSecretEnv(Map.of("WANDB_API_KEY", secret)));
        tickUntil(t -> t.exited("s0") != null);

        assertThat(exited("s0").exitCode()).as("the worker saw the value").isZero();
        String log = Files.readString(temp.resolve("run/s0/" + ProcessRunner.LOG_FILE));
        assertThat(log).contains("secret-seen", "plain=fast");
        assertThat(reports.toString()).doesNotContain(secret);
    }

    /** The stack's enrolment key in these tests: the scheduler seals with it, the agents' credentials come from it. */
    private static final byte[] ENROLMENT_KEY = new byte[32];

    /** The credential of agent {@code agentId}, enrolled for this test's host. */
    private static Enrolment.Credential enrolled(String agentId) {
        return Enrolment.Credential.mint(ENROLMENT_KEY, agentId, List.of("gpu-host-*"));
    }

    /** {@code start} as the scheduler writes it for the host of {@code agent}. */
    private static NodeCommand sealedFor(Enrolment.Credential agent, NodeCommand start) {
        return new Enrolment.Verifier(ENROLMENT_KEY).sealFor(Enrolment.Agent.of(agent)).seal(start);
    }

    /** This test's runner, replaced by that of an agent holding {@code agent} (null: no credential). */
    private ProcessRunner runnerOf(Enrolment.Credential agent) {
        runner.close();
        runner = new ProcessRunner(List.of(host()), new RunnerSettings(temp.resolve("run"), Duration.ofMillis(200),
                Duration.ofMillis(500), "SIGUSR1", Duration.ofSeconds(5)), Clock.systemUTC(), MigProvisioner.NONE,
                agent == null ? null : agent.seal());
        return runner;
    }

    @Test
    void aStartSealedForThisAgentRunsWithTheClearValueInTheWorkersEnvironmentOnly() throws Exception {
        Enrolment.Credential rackA = enrolled("rack-a");
        runnerOf(rackA);
        String secret = "hunter2-" + java.util.UUID.randomUUID();
        NodeCommand start = sealedFor(rackA, start("s0", List.of(0), null, 0, List.of("bash", "-c",
                "test \"$WANDB_API_KEY\" = '" + secret + "' && echo secret-seen; echo plain=$MODE"),
                Map.of("MODE", "fast")).withSecretEnv(Map.of("WANDB_API_KEY", secret)));
        assertThat(start.secretEnv().get("WANDB_API_KEY")).startsWith("gpucloud:agent-sealed:v1:rack-a:");

        handle(start);
        tickUntil(t -> t.exited("s0") != null);

        assertThat(exited("s0").exitCode()).as("the worker saw the clear value").isZero();
        assertThat(Files.readString(temp.resolve("run/s0/" + ProcessRunner.LOG_FILE))).contains("secret-seen");
        assertThat(reports.toString()).doesNotContain(secret);
    }

    @Test
    void aStartSealedForAnotherAgentFailsNamingTheVariableAndRunsNothing() throws Exception {
        runnerOf(enrolled("rack-a"));
        NodeCommand foreign = sealedFor(enrolled("rack-b"), start("s1", List.of(0), null, 0,
                List.of("bash", "-c", "touch ran"), Map.of()).withSecretEnv(Map.of("WANDB_API_KEY", "hunter2")));

        handle(foreign);

        AllocationEvent failed = exited("s1");
        assertThat(failed.exitCode()).isEqualTo(ProcessRunner.EXIT_CANNOT_START);
        assertThat(failed.detail()).isEqualTo("cannot start: secret variable 'WANDB_API_KEY' is sealed for agent"
                + " 'rack-b', not for this agent, 'rack-a'");
        assertThat(runner.running()).isEmpty();
        assertThat(temp.resolve("run/s1/ran")).doesNotExist();
        // the GPU it named stays free for the next START
        handle(bash("s2", List.of(0), "exit 0"));
        tickUntil(t -> t.exited("s2") != null);
        assertThat(exited("s2").exitCode()).isZero();
        assertThat(reports.toString()).doesNotContain("hunter2");
    }

    @Test
    void anAgentWithoutACredentialRefusesASealedValueAndStillRunsClearOnes() throws Exception {
        handle(sealedFor(enrolled("rack-a"), start("s3", List.of(0), null, 0, List.of("true"), Map.of())
                .withSecretEnv(Map.of("TOKEN", "hunter2"))));

        assertThat(exited("s3").detail()).isEqualTo("cannot start: secret variable 'TOKEN' is sealed for agent"
                + " 'rack-a', and this agent has no enrolment credential to open it with"
                + " (GPUCLOUD_ENROLMENT_CREDENTIAL)");
        handle(start("s4", List.of(0), null, 0, List.of("bash", "-c", "test \"$TOKEN\" = hunter2"), Map.of())
                .withSecretEnv(Map.of("TOKEN", "hunter2")));
        tickUntil(t -> t.exited("s4") != null);
        assertThat(exited("s4").exitCode()).isZero();
        assertThat(reports.toString()).doesNotContain("hunter2");
    }

    @Test
    void aBadSecretVariableIsRefusedWithItsNameNeverItsValue() {
        handle(start("s1", List.of(0), null, 0, List.of("true"), Map.of())
                .withSecretEnv(Map.of("TOKEN", "hunter2\0")));
        handle(start("s2", List.of(0), null, 0, List.of("true"), Map.of("TOKEN", "x"))
                .withSecretEnv(Map.of("TOKEN", "hunter2")));
        handle(start("s3", List.of(0), null, 0, List.of("true"), Map.of())
                .withSecretEnv(Map.of("BAD=NAME", "hunter2")));

        assertThat(exited("s1").detail()).isEqualTo("cannot start: secret env TOKEN is null or holds a NUL character");
        assertThat(exited("s2").detail()).isEqualTo("cannot start: env TOKEN is both secret and not");
        assertThat(exited("s3").detail()).isEqualTo("cannot start: secret env name 'BAD=NAME' is not a variable name");
        assertThat(reports.toString()).doesNotContain("hunter2");
    }

    @Test
    void withoutNvmlASlotRunsOnlyOnAnInstanceAlreadyThere() {
        handle(start("s1", List.of(2), "1g.5gb@0", 0, List.of("true"), Map.of()));

        assertThat(exited("s1").exitCode()).isEqualTo(ProcessRunner.EXIT_CANNOT_START);
        assertThat(exited("s1").detail()).contains("MIG slot 1g.5gb@0 on GPU 2 of " + NODE,
                "cannot destroy idle instance 3g.20gb (" + MIG_UUID + ")", "only NVML can");
        assertThat(events("s1")).noneMatch(e -> e.type() == AllocationEventType.STARTED);
    }

    @Test
    void aMigAllocationSeesItsInstanceUuid() throws Exception {
        handle(start("m1", List.of(), MIG_UUID, 0, List.of("bash", "-c", "echo \"dev=$CUDA_VISIBLE_DEVICES\""),
                Map.of()));
        tickUntil(t -> t.exited("m1") != null);
        assertThat(Files.readString(temp.resolve("run/m1/output.log"))).contains("dev=" + MIG_UUID);
        assertThat(usage("m1")).allSatisfy(u -> assertThat(u.sku().code()).isEqualTo("A100-SXM4-40GB/mig-3g.20gb"));
        assertThat(events("m1")).filteredOn(e -> e.type() == AllocationEventType.STARTED).singleElement()
                .satisfies(e -> assertThat(e.migInstanceUuid()).isEqualTo(MIG_UUID));
    }

    @Test
    void aCheckpointSignalsTheWorkloadAndItsMarkerBecomesCheckpointSaved() throws Exception {
        handle(bash("k1", List.of(0), """
                trap 'echo weights > "$GPUCLOUD_CHECKPOINT_DIR/step-1.pt";
                      echo step-1.pt > "$GPUCLOUD_CHECKPOINT_MARKER.tmp";
                      mv "$GPUCLOUD_CHECKPOINT_MARKER.tmp" "$GPUCLOUD_CHECKPOINT_MARKER"' USR1
                echo ready > ready
                while true; do sleep 0.05; done
                """));
        Path ready = temp.resolve("run/k1/ready");
        tickUntil(t -> Files.exists(ready));
        handle(mk(NodeCommandType.CHECKPOINT, "k1"));
        tickUntil(t -> t.events("k1").stream().anyMatch(e -> e.type() == AllocationEventType.CHECKPOINT_SAVED));
        AllocationEvent saved = events("k1").stream().filter(e -> e.type() == AllocationEventType.CHECKPOINT_SAVED)
                .findFirst().orElseThrow();
        assertThat(saved.checkpointPath()).isEqualTo(temp.resolve("run/k1/checkpoints/step-1.pt").toString());
        assertThat(saved.detail()).isEqualTo("saved for command c-2");
        assertThat(temp.resolve("run/k1/checkpoints/" + ProcessRunner.CHECKPOINT_MARKER)).doesNotExist();

        handle(mk(NodeCommandType.STOP, "k1"));
        tickUntil(t -> t.exited("k1") != null);
        assertThat(exited("k1").exitCode()).isEqualTo(143);
        assertThat(exited("k1").detail()).startsWith("stopped by command c-3 after");
        assertContiguous(usage("k1"), events("k1").get(0).occurredAt(), exited("k1").occurredAt());
    }

    @Test
    void aStopEndsWithSigtermAndAWorkloadThatIgnoresItIsKilledAfterTheGrace() throws Exception {
        handle(bash("s1", List.of(0), "trap 'echo bye; exit 0' TERM; echo ready > ready; while true; do sleep 0.05; done"));
        handle(bash("s2", List.of(1), "trap '' TERM; echo ready > ready; while true; do sleep 0.05; done"));
        tickUntil(t -> Files.exists(temp.resolve("run/s1/ready")) && Files.exists(temp.resolve("run/s2/ready")));
        handle(mk(NodeCommandType.STOP, "s1"));
        handle(mk(NodeCommandType.STOP, "s2"));
        tickUntil(t -> t.exited("s1") != null && t.exited("s2") != null);
        assertThat(exited("s1").exitCode()).as("its TERM trap exits 0").isZero();
        assertThat(exited("s2").exitCode()).as("killed by SIGKILL").isEqualTo(137);
        assertThat(exited("s2").detail()).contains("SIGKILL after the 0.500 s grace");
        assertThat(Duration.between(events("s2").get(0).occurredAt(), exited("s2").occurredAt()))
                .isGreaterThanOrEqualTo(Duration.ofMillis(500));
        for (String alloc : List.of("s1", "s2")) {
            assertContiguous(usage(alloc), events(alloc).get(0).occurredAt(), exited(alloc).occurredAt());
        }
        assertThat(Files.readString(temp.resolve("run/s1/output.log"))).contains("bye");
    }

    @Test
    void badStartsAreAnsweredWithExitedAndTheReasonNeverAnException() {
        handle(start("b1", List.of(0), null, 0, List.of(), Map.of()));
        handle(start("b2", List.of(0), null, 0, List.of("/no/such/program"), Map.of()));
        handle(start("b3", List.of(0), null, 0, List.of("true"), Map.of("BAD=NAME", "x")));
        handle(start("b4", List.of(9), null, 0, List.of("true"), Map.of()));
        handle(start("b5", List.of(2), null, 0, List.of("true"), Map.of()));
        handle(start("b6", List.of(0), null, 1500, List.of("true"), Map.of()));
        handle(start("b7", List.of(0, 0), null, 0, List.of("true"), Map.of()));
        handle(start("b8", List.of(), "MIG-nope", 0, List.of("true"), Map.of()));
        assertThat(events("b1")).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(AllocationEventType.EXITED);
            assertThat(e.exitCode()).isEqualTo(125);
            assertThat(e.detail()).isEqualTo("cannot start: the command is empty");
        });
        assertThat(exited("b2").exitCode()).isEqualTo(127);
        assertThat(exited("b2").detail()).startsWith("cannot start: cannot execute /no/such/program: ");
        assertThat(exited("b3").detail()).isEqualTo("cannot start: env name 'BAD=NAME' is not a variable name");
        assertThat(exited("b4").detail()).isEqualTo("cannot start: GPU 9 does not exist on gpu-host-1 (3 GPUs: 0..2)");
        assertThat(exited("b5").detail()).contains("is in MIG mode");
        assertThat(exited("b6").detail()).contains("milliGpu 1500 is more than one GPU");
        assertThat(exited("b7").detail()).contains("GPU 0 is listed twice");
        assertThat(exited("b8").detail()).contains("MIG instance MIG-nope does not exist");
        assertThat(reports.stream().flatMap(r -> r.allocationEvents().stream()))
                .noneMatch(e -> e.type() == AllocationEventType.STARTED);
        assertThat(runner.running()).isEmpty();
    }

    @Test
    void aBusyGpuIsRefusedAndFractionsShareOne() throws Exception {
        handle(bash("w1", List.of(0), "sleep 5"));
        handle(bash("w2", List.of(0), "sleep 5"));
        assertThat(lost("w2").detail()).isEqualTo("cannot start: GPU 0 on gpu-host-1 is busy with w1");
        assertThat(lost("w2").heldBy()).as("a busy GPU is the placement's doing: LOST, naming who holds it")
                .containsExactly("w1");
        assertThat(exited("w2")).isNull();
        handle(start("f1", List.of(1), null, 500, List.of("bash", "-c", "echo milli=$GPUCLOUD_MILLI_GPU; sleep 5"), Map.of()));
        handle(start("f2", List.of(1), null, 500, List.of("sleep", "5"), Map.of()));
        handle(start("f3", List.of(1), null, 100, List.of("sleep", "5"), Map.of()));
        assertThat(exited("f1")).isNull();
        assertThat(exited("f2")).isNull();
        assertThat(lost("f3").detail()).contains("has 0 milli-GPU free, asked for 100");
        assertThat(lost("f3").heldBy()).containsExactly("f1", "f2");
        assertThat(runner.running()).extracting(RunningAllocation::allocationId).containsExactly("w1", "f1", "f2");
    }

    @Test
    void commandsForUnknownAllocationsAreAnsweredLostAndRepeatsAndOtherNodesAreOnlyNoted() throws Exception {
        handle(mk(NodeCommandType.STOP, "ghost"));
        assertThat(events("ghost")).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(AllocationEventType.LOST);
            assertThat(e.detail()).isEqualTo("unknown allocation: ghost does not run on gpu-host-1 (STOP c-1)");
        });
        handle(mk(NodeCommandType.CHECKPOINT, "ghost2"));
        assertThat(events("ghost2")).singleElement().satisfies(e -> assertThat(e.type()).isEqualTo(AllocationEventType.LOST));

        NodeCommand quick = bash("q1", List.of(0), "exit 0");
        handle(quick);
        tickUntil(t -> t.exited("q1") != null);
        handle(mk(NodeCommandType.STOP, "q1"));
        assertThat(events("q1")).as("a STOP of an ended run is answered with its EXITED again")
                .extracting(AllocationEvent::type)
                .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED, AllocationEventType.EXITED);
        assertThat(notes()).anyMatch(n -> n.contains("q1, which already exited 0"));

        handle(quick);
        assertThat(notes()).anyMatch(n -> n.startsWith("ignored repeated command " + quick.commandId()));
        Map<String, String> env = new HashMap<>();
        NodeCommand other = new NodeCommand("c-x", NodeCommandType.STOP, "another-host", "a", "j", "test-tenant", List.of(),
                null, 0, 0, 0, null, List.of(), env, null, null, null, Instant.now());
        assertThat(runner.owns("another-host")).isFalse();
        assertThat(handle(other).allocationEvents()).isEmpty();
    }

    @Test
    void aBadSignalOrGraceInTheSettingsIsRefusedWithTheReason() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RunnerSettings(temp, Duration.ofSeconds(1),
                        Duration.ofSeconds(1), "SIGFOO", Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown signal 'SIGFOO'")
                .hasMessageContaining("USR1");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RunnerSettings(temp, Duration.ofSeconds(1),
                        Duration.ofSeconds(-1), "USR1", Duration.ofSeconds(1)))
                .hasMessageContaining("stop grace must not be negative");
        assertThat(new RunnerSettings(temp, Duration.ofSeconds(1), Duration.ZERO, "usr2", Duration.ofSeconds(1))
                .checkpointSignal()).isEqualTo("USR2");
    }

    @Test
    void allocationIdsBecomeHarmlessDirectoryNames() {
        assertThat(ProcessRunner.safeName("../../etc")).isEqualTo(".._.._etc");
        assertThat(ProcessRunner.safeName("..")).isEqualTo("_..");
        assertThat(ProcessRunner.safeName("alloc-1")).isEqualTo("alloc-1");
    }

    @Test
    void stoppingEverythingAtShutdownReportsEachExitAndItsLastUsage() throws Exception {
        handle(bash("z1", List.of(0), "trap 'exit 0' TERM; echo ready > ready; while true; do sleep 0.05; done"));
        handle(bash("z2", List.of(1), "trap '' TERM; echo ready > ready; while true; do sleep 0.05; done"));
        tickUntil(t -> Files.exists(temp.resolve("run/z1/ready")) && Files.exists(temp.resolve("run/z2/ready")));
        reports.add(runner.stopAll(Duration.ofMillis(500)));
        assertThat(runner.running()).isEmpty();
        assertThat(exited("z1").exitCode()).isZero();
        assertThat(exited("z2").exitCode()).isEqualTo(137);
        assertThat(exited("z1").detail()).startsWith("stopped by command (agent shutdown)");
        for (String alloc : List.of("z1", "z2")) {
            assertContiguous(usage(alloc), events(alloc).get(0).occurredAt(), exited(alloc).occurredAt());
        }
    }
}
