package dev.gpucloud.agent.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.UsageEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Not a @QuarkusTest: the fleet is plain Java on a clock the test moves. */
class SimulatedFleetTest {

    private static final Instant T0 = Instant.parse("2025-03-01T12:00:00Z");

    private MutableClock clock;
    private SimulatedFleet fleet;
    private int commands;

    @BeforeEach
    void setUp() {
        clock = new MutableClock(T0);
        fleet = new SimulatedFleet(SimulationSettings.defaults().withFleet(SimulationSettings.DEFAULT_FLEET + ",h100x8-mig"),
                clock);
    }

    private NodeCommand start(String node, String alloc, List<Integer> gpus, List<String> command) {
        return mkStart(node, alloc, gpus, 0, null, command, Map.of());
    }

    private NodeCommand mkStart(String node, String alloc, List<Integer> gpus, int milliGpu, String mig,
            List<String> command, Map<String, String> env) {
        return new NodeCommand("cmd-" + (++commands), NodeCommandType.START, node, alloc, "job-" + alloc, "acme", gpus,
                mig, milliGpu, 0, 1, null, command, env, "s3://ckpt/job-" + alloc, null, null, clock.instant());
    }

    private NodeCommand mk(NodeCommandType type, String node, String alloc) {
        return new NodeCommand("cmd-" + (++commands), type, node, alloc, "job-" + alloc, "acme", List.of(), null, 0, 0,
                0, null, List.of(), Map.of(), null, null, null, clock.instant());
    }

    private static List<AllocationEvent> events(List<Reports> reports) {
        return reports.stream().flatMap(r -> r.allocationEvents().stream()).toList();
    }

    private static List<UsageEvent> usage(List<Reports> reports) {
        return reports.stream().flatMap(r -> r.usage().stream()).toList();
    }

    private List<Reports> runFor(double seconds, double step) {
        List<Reports> out = new ArrayList<>();
        for (double t = 0; t < seconds; t += step) {
            clock.advanceSeconds(step);
            out.add(fleet.advance());
        }
        return out;
    }

    @Test
    void aWatchedRunWritesWhatAWorkerWouldSayAndTellsItsWatcher(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        List<String> watched = new ArrayList<>();
        fleet.watchOutput(new dev.gpucloud.agent.logs.OutputWatcher() {
            @Override
            public void started(dev.gpucloud.agent.logs.OutputSource source) {
                watched.add("started " + source.allocationId() + " " + dir.relativize(source.stdout()));
            }

            @Override
            public void exited(String allocationId) {
                watched.add("exited " + allocationId);
            }
        }, dir);
        fleet.handle(start("sim-a100-0", "a/9", List.of(0), List.of("sleep", "5")));
        runFor(6, 1);
        assertThat(watched).containsExactly("started a/9 a_9/output.log", "exited a/9");
        assertThat(java.nio.file.Files.readAllLines(dir.resolve("a_9/output.log")))
                .satisfiesExactly(
                        l -> assertThat(l).isEqualTo(T0 + " simulated worker 0 of 1 on sim-a100-0 GPUs [0]: sleep 5 for 5 s"),
                        l -> assertThat(l).isEqualTo(T0.plusSeconds(5) + " exited 0 after 5 s"));
    }

    @Test
    void aRunStartsReportsTiledUsageAndExitsAfterItsSleep() {
        List<Reports> reports = new ArrayList<>();
        reports.add(fleet.handle(start("sim-a100-0", "a1", List.of(0, 1), List.of("sleep", "25"))));
        reports.addAll(runFor(40, 0.7));

        List<AllocationEvent> events = events(reports);
        assertThat(events).extracting(AllocationEvent::type)
                .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);
        assertThat(events.get(0).occurredAt()).isEqualTo(T0);
        assertThat(events.get(0).detail()).contains("GPUs [0, 1]").contains("25 s");
        assertThat(events.get(1).occurredAt()).isEqualTo(T0.plusSeconds(25));
        assertThat(events.get(1).exitCode()).isZero();
        assertThat(events.get(1).detail()).isEqualTo("exited 0 after 25 s");

        List<UsageEvent> usage = usage(reports);
        assertThat(usage).extracting(UsageEvent::from)
                .containsExactly(T0, T0.plusSeconds(10), T0.plusSeconds(20));
        assertThat(usage).extracting(UsageEvent::to)
                .containsExactly(T0.plusSeconds(10), T0.plusSeconds(20), T0.plusSeconds(25));
        assertThat(usage).allSatisfy(u -> {
            assertThat(u.sku()).isEqualTo(Sku.wholeGpu("A100-SXM4-40GB"));
            assertThat(u.units()).isEqualTo(2);
            assertThat(u.capacityType()).isEqualTo(CapacityType.ON_DEMAND);
            assertThat(u.zone()).isEqualTo("local-1a");
            assertThat(u.tenant()).isEqualTo("acme");
        });
        assertThat(fleet.running()).isEmpty();
    }

    @Test
    void stopEndsTheRunNowWith143() {
        fleet.handle(start("sim-h100-0", "a1", List.of(0), List.of("sleep", "600")));
        List<Reports> reports = runFor(12.5, 0.5);
        reports.add(fleet.handle(mk(NodeCommandType.STOP, "sim-h100-0", "a1")));

        AllocationEvent exited = events(reports).get(0);
        assertThat(exited.type()).isEqualTo(AllocationEventType.EXITED);
        assertThat(exited.exitCode()).isEqualTo(SimulatedFleet.EXIT_STOPPED);
        assertThat(exited.occurredAt()).isEqualTo(T0.plusMillis(12_500));
        List<UsageEvent> usage = usage(reports);
        assertThat(usage).extracting(UsageEvent::to).containsExactly(T0.plusSeconds(10), T0.plusMillis(12_500));
        assertThat(fleet.running()).isEmpty();
    }

    @Test
    void theFreedGpusCanBeStartedAgain() {
        fleet.handle(start("sim-a10g-0", "a1", List.of(0), List.of("sleep", "5")));
        clock.advanceSeconds(5);
        Reports again = fleet.handle(start("sim-a10g-0", "a2", List.of(0), List.of("sleep", "5")));
        assertThat(again.allocationEvents()).extracting(AllocationEvent::allocationId, AllocationEvent::type)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("a1", AllocationEventType.EXITED),
                        org.assertj.core.groups.Tuple.tuple("a2", AllocationEventType.STARTED));
    }

    @Test
    void envSetsDurationAndExitCode() {
        fleet.handle(mkStart("sim-v100-spot-0", "a1", List.of(0), 0, null, List.of("python", "train.py"),
                Map.of("GPUCLOUD_SIM_SECONDS", "3", "GPUCLOUD_SIM_EXIT_CODE", "7")));
        List<Reports> reports = runFor(4, 1);
        AllocationEvent exited = events(reports).get(0);
        assertThat(exited.exitCode()).isEqualTo(7);
        assertThat(exited.occurredAt()).isEqualTo(T0.plusSeconds(3));
        assertThat(usage(reports)).singleElement().satisfies(u -> {
            assertThat(u.capacityType()).isEqualTo(CapacityType.SPOT);
            assertThat(u.sku().gpuModel()).isEqualTo("V100-SXM2-16GB");
        });
    }

    @Test
    void checkpointIsSavedUnderTheCommandsDirectoryAfterAMoment() {
        fleet.handle(start("sim-a100-0", "a1", List.of(3), List.of("sleep", "60")));
        clock.advanceSeconds(5);
        NodeCommand checkpoint = new NodeCommand("ck-1", NodeCommandType.CHECKPOINT, "sim-a100-0", "a1", "job-a1",
                "acme", List.of(), null, 0, 0, 0, null, List.of(), Map.of(), "s3://bucket/ckpt/", null,
                clock.instant().plusSeconds(120), clock.instant());
        Reports now = fleet.handle(checkpoint);
        assertThat(now.allocationEvents()).isEmpty();

        List<Reports> later = runFor(3, 1);
        AllocationEvent saved = events(later).get(0);
        assertThat(saved.type()).isEqualTo(AllocationEventType.CHECKPOINT_SAVED);
        assertThat(saved.checkpointPath()).isEqualTo("s3://bucket/ckpt/a1-ckpt-1");
        assertThat(saved.occurredAt()).isEqualTo(T0.plusSeconds(7));
    }

    @Test
    void fractionAndMigStartsAreBilledAsTheirSku() {
        fleet.handle(mkStart("sim-a10g-0", "f1", List.of(0), 250, null, List.of("sleep", "2"), Map.of()));
        fleet.handle(mkStart("sim-a10g-0", "f2", List.of(0), 500, null, List.of("sleep", "2"), Map.of()));
        String mig = fleet.inventory().stream().filter(h -> h.nodeId().equals("sim-h100-mig-0")).findFirst()
                .orElseThrow().gpus().get(2).migInstances().get(4).uuid();
        fleet.handle(mkStart("sim-h100-mig-0", "m1", List.of(), 0, mig, List.of("sleep", "2"), Map.of()));
        List<UsageEvent> usage = usage(runFor(3, 1));

        assertThat(usage).extracting(u -> u.allocationId() + " " + u.sku().code() + " x" + u.units())
                .containsExactlyInAnyOrder("f1 A10G/250m x1", "f2 A10G/500m x1", "m1 H100-SXM5-80GB/mig-1g.10gb x1");
    }

    static Stream<Arguments> refusedStarts() {
        return Stream.of(
                Arguments.of("a GPU that does not exist", "sim-a10g-0", List.of(1), 0, "GPU 1 does not exist on sim-a10g-0",
                        false),
                Arguments.of("a GPU listed twice", "sim-a100-0", List.of(2, 2), 0, "GPU 2 is listed twice", false),
                Arguments.of("a busy GPU", "sim-a100-0", List.of(6, 7), 0, "GPU 7 on sim-a100-0 is busy with busy-1", true),
                Arguments.of("a fraction of a busy GPU", "sim-a100-0", List.of(7), 500, "has 0 milli-GPU free", true),
                Arguments.of("more than a GPU", "sim-a100-0", List.of(0), 1500, "milliGpu 1500 is more than one GPU",
                        false),
                Arguments.of("a whole GPU in MIG mode", "sim-h100-mig-0", List.of(0), 0, "is in MIG mode", false));
    }

    /**
     * A START the job's own spec dooms exits 125; one refused only because other allocations hold its GPUs is
     * LOST and names them (the placement's doing, not the job's), so the scheduler neither spends a retry on
     * it nor places it on those GPUs again while they run.
     */
    @ParameterizedTest(name = "START on {0} is refused saying why")
    @MethodSource("refusedStarts")
    void aStartThatCannotRunIsRefusedWithTheReason(String name, String node, List<Integer> gpus, int milli,
            String why, boolean busy) {
        fleet.handle(start("sim-a100-0", "busy-1", List.of(7), List.of("sleep", "100")));

        Reports reports = fleet.handle(mkStart(node, "x1", gpus, milli, null, List.of("sleep", "1"), Map.of()));

        assertThat(reports.allocationEvents()).singleElement().satisfies(e -> {
            if (busy) {
                assertThat(e.type()).isEqualTo(AllocationEventType.LOST);
                assertThat(e.heldBy()).containsExactly("busy-1");
            } else {
                assertThat(e.type()).isEqualTo(AllocationEventType.EXITED);
                assertThat(e.exitCode()).isEqualTo(SimulatedFleet.EXIT_CANNOT_START);
                assertThat(e.heldBy()).isEmpty();
            }
            assertThat(e.detail()).startsWith("cannot start: ").contains(why);
        });
        assertThat(fleet.running()).extracting(r -> r.allocationId()).containsExactly("busy-1");
    }

    /**
     * A START that comes after its start-by time is not started: the scheduler may have counted it lost for the
     * host's silence and given its GPUs to other work (the 1,000-host fault run of 2026-12-03).
     */
    @Test
    void aStartThatComesAfterItsStartByTimeIsLostNotStarted() {
        NodeCommand onTime = mkStart("sim-a100-0", "on-time", List.of(0), 0, null, List.of("sleep", "5"), Map.of());
        NodeCommand late = mkStart("sim-a100-0", "late", List.of(1), 0, null, List.of("sleep", "5"), Map.of());
        Instant now = clock.instant();

        fleet.handle(withDeadline(onTime, now));
        Reports reports = fleet.handle(withDeadline(late, now.minusMillis(1)));

        assertThat(reports.allocationEvents()).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(AllocationEventType.LOST);
            assertThat(e.allocationId()).isEqualTo("late");
            assertThat(e.detail()).startsWith("cannot start: the START came at ").contains("after its start-by deadline");
        });
        assertThat(fleet.running()).extracting(r -> r.allocationId()).as("a START on time runs").containsExactly("on-time");
        assertThat(fleet.handle(mk(NodeCommandType.STATUS, "sim-a100-0", "late")).allocationEvents())
                .as("asked later, the agent repeats its answer").singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(AllocationEventType.LOST));
    }

    private static NodeCommand withDeadline(NodeCommand c, Instant deadline) {
        return new NodeCommand(c.commandId(), c.type(), c.nodeId(), c.allocationId(), c.jobId(), c.tenant(),
                c.gpuIndices(), c.migInstanceUuid(), c.milliGpu(), c.rank(), c.worldSize(), c.masterAddr(), c.command(),
                c.env(), c.checkpointDir(), c.resumeFrom(), deadline, c.issuedAt(), c.reason(), c.epoch());
    }

    @Test
    void aRepeatedCommandIdChangesNothing() {
        NodeCommand cmd = start("sim-a100-0", "a1", List.of(0), List.of("sleep", "10"));
        assertThat(fleet.handle(cmd).allocationEvents()).hasSize(1);
        Reports repeat = fleet.handle(cmd);
        assertThat(repeat.allocationEvents()).isEmpty();
        assertThat(repeat.notes()).singleElement().asString().contains("repeated command");
        assertThat(fleet.running()).hasSize(1);
    }

    @Test
    void commandsForOtherNodesAreIgnoredAndUnknownAllocationsAnsweredLost() {
        assertThat(fleet.owns("sim-a100-0")).isTrue();
        assertThat(fleet.owns("other-a100-0")).isFalse();
        assertThat(fleet.handle(start("other-a100-0", "a1", List.of(0), List.of())).allocationEvents()).isEmpty();
        for (NodeCommandType type : List.of(NodeCommandType.STOP, NodeCommandType.CHECKPOINT)) {
            assertThat(fleet.handle(mk(type, "sim-a100-0", "nope")).allocationEvents()).singleElement()
                    .satisfies(e -> {
                        assertThat(e.type()).isEqualTo(AllocationEventType.LOST);
                        assertThat(e.detail()).startsWith("unknown allocation: nope does not run on sim-a100-0 (" + type);
                    });
        }
        fleet.handle(start("sim-a100-0", "a2", List.of(0), List.of("sleep", "1")));
        clock.advance(Duration.ofSeconds(2));
        fleet.advance();
        Reports late = fleet.handle(mk(NodeCommandType.STOP, "sim-a100-0", "a2"));
        assertThat(late.allocationEvents()).as("a STOP of an ended run is answered with how it ended")
                .singleElement().satisfies(e -> {
                    assertThat(e.type()).isEqualTo(AllocationEventType.EXITED);
                    assertThat(e.exitCode()).isZero();
                });
        assertThat(late.notes()).singleElement().asString().contains("a2, which already exited 0");
        Reports checkpoint = fleet.handle(mk(NodeCommandType.CHECKPOINT, "sim-a100-0", "a2"));
        assertThat(checkpoint.allocationEvents()).isEmpty();
        assertThat(checkpoint.notes()).singleElement().asString().contains("a2 already exited 0");
    }

    @Test
    void aStatusIsAnsweredWithTheAllocationsLastWordAndChangesNothing() {
        fleet.handle(start("sim-a100-0", "a1", List.of(0), List.of("sleep", "100")));
        assertThat(fleet.handle(mk(NodeCommandType.STATUS, "sim-a100-0", "a1")).allocationEvents()).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(AllocationEventType.STARTED));
        assertThat(fleet.running()).hasSize(1);
        fleet.handle(mk(NodeCommandType.STOP, "sim-a100-0", "a1"));
        assertThat(fleet.handle(mk(NodeCommandType.STATUS, "sim-a100-0", "a1")).allocationEvents()).singleElement()
                .satisfies(e -> {
                    assertThat(e.type()).isEqualTo(AllocationEventType.EXITED);
                    assertThat(e.exitCode()).isEqualTo(SimulatedFleet.EXIT_STOPPED);
                });
        assertThat(fleet.handle(mk(NodeCommandType.STATUS, "sim-a100-0", "never")).allocationEvents()).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(AllocationEventType.LOST));
    }

    @Test
    void aStopsReasonIsRepeatedOnTheExit() {
        fleet.handle(start("sim-a100-0", "a1", List.of(0), List.of("sleep", "100")));
        NodeCommand stop = mk(NodeCommandType.STOP, "sim-a100-0", "a1");
        stop = new NodeCommand(stop.commandId(), stop.type(), stop.nodeId(), stop.allocationId(), stop.jobId(),
                stop.tenant(), stop.gpuIndices(), null, 0, 0, 0, null, List.of(), Map.of(), null, null, null,
                stop.issuedAt(), "not one this scheduler runs");
        assertThat(fleet.handle(stop).allocationEvents()).singleElement().satisfies(e -> {
            assertThat(e.exitCode()).isEqualTo(SimulatedFleet.EXIT_STOPPED);
            assertThat(e.detail()).contains("(not one this scheduler runs)");
        });
    }

    @Test
    void aRunThatEndedBeforeItsStopExitsWithItsOwnCode() {
        fleet.handle(start("sim-a100-0", "a1", List.of(0), List.of("sleep", "2")));
        clock.advance(Duration.ofSeconds(3));
        Reports reports = fleet.handle(mk(NodeCommandType.STOP, "sim-a100-0", "a1"));
        assertThat(reports.allocationEvents()).singleElement().satisfies(e -> {
            assertThat(e.exitCode()).isZero();
            assertThat(e.occurredAt()).isEqualTo(T0.plusSeconds(2));
        });
    }

    @Test
    void busyGpusReadBusyAndIdleOnesIdle() {
        fleet.handle(start("sim-a100-0", "a1", List.of(0, 1), List.of("sleep", "100")));
        var sample = fleet.sample().get(0);
        assertThat(sample.nodeId()).isEqualTo("sim-a100-0");
        assertThat(sample.gpus().get(0).gpuUtilPercent()).isBetween(85.0, 99.0);
        assertThat(sample.gpus().get(2).gpuUtilPercent()).isZero();
        assertThat(fleet.running()).singleElement().satisfies(r -> {
            assertThat(r.gpuIndices()).containsExactly(0, 1);
            assertThat(r.endsAt()).isEqualTo(T0.plusSeconds(100));
        });
    }
}
