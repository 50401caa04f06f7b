package dev.gpucloud.agent.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.MigReading;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * MIG slots ({@code profile@start}) on simulated hosts: a -mig host's GPUs start as seven instances
 * of the smallest profile at slices 0..6; a slot runs on the instance already there or gets one made
 * where the idle instances in its way were. Plain JUnit on a clock the test moves.
 */
class SimulatedMigSlotTest {

    private static final Instant T0 = Instant.parse("2025-03-01T12:00:00Z");
    private static final String H100 = "sim-h100-mig-0";
    private static final String A100 = "sim-a100-mig-0";

    private MutableClock clock;
    private SimulatedFleet fleet;
    private int commands;

    @BeforeEach
    void setUp() {
        clock = new MutableClock(T0);
        fleet = fleet();
    }

    private SimulatedFleet fleet() {
        return new SimulatedFleet(SimulationSettings.defaults().withFleet("h100x8-mig,a100x8-mig,a100x8"), clock);
    }

    private Reports start(SimulatedFleet on, String node, String alloc, int gpu, String slot) {
        return on.handle(new NodeCommand("cmd-" + (++commands), NodeCommandType.START, node, alloc, "job-" + alloc, "acme",
                List.of(gpu), slot, 0, 0, 1, null, List.of("sleep", "60"), Map.of(), null, null, null, clock.instant()));
    }

    private Reports start(String node, String alloc, int gpu, String slot) {
        return start(fleet, node, alloc, gpu, slot);
    }

    private static AllocationEvent only(Reports r, AllocationEventType type) {
        return r.allocationEvents().stream().filter(e -> e.type() == type).findFirst().orElse(null);
    }

    private GpuDevice gpu(SimulatedFleet on, String node, int index) {
        return on.inventory().stream().filter(h -> h.nodeId().equals(node)).findFirst().orElseThrow().gpus().get(index);
    }

    @Test
    void aMigHostReportsWhereEachInstanceStarts() {
        assertThat(gpu(fleet, H100, 0).migInstances()).extracting(MigInstance::placementStart)
                .containsExactly(0, 1, 2, 3, 4, 5, 6);
    }

    @Test
    void aSlotAnInstanceAlreadyTakesRunsOnIt() {
        MigInstance there = gpu(fleet, H100, 2).migInstances().get(3);

        Reports r = start(H100, "m1", 2, "1g.10gb@3");

        AllocationEvent started = only(r, AllocationEventType.STARTED);
        assertThat(started.migInstanceUuid()).isEqualTo(there.uuid());
        assertThat(r.inventoryChanged()).isEmpty();
        assertThat(fleet.running()).singleElement().satisfies(a -> {
            assertThat(a.migInstanceUuid()).isEqualTo(there.uuid());
            assertThat(a.sku().code()).isEqualTo("H100-SXM5-80GB/mig-1g.10gb");
        });
    }

    @Test
    void aLargerSlotReplacesTheIdleInstancesInItsWayWithAStableUuid() {
        Reports r = start(H100, "m2", 0, "3g.40gb@4");

        AllocationEvent started = only(r, AllocationEventType.STARTED);
        assertThat(started).as("reports: %s", r).isNotNull();
        assertThat(gpu(fleet, H100, 0).migInstances()).extracting(MigInstance::profile, MigInstance::placementStart)
                .containsExactly(tuple("1g.10gb", 0), tuple("1g.10gb", 1), tuple("1g.10gb", 2), tuple("1g.10gb", 3),
                        tuple("3g.40gb", 4));
        MigInstance created = gpu(fleet, H100, 0).migInstances().get(4);
        assertThat(created.uuid()).isEqualTo(started.migInstanceUuid()).startsWith("MIG-");
        assertThat(created.memoryMib()).isEqualTo(4 * GpuModel.H100_SXM5_80GB.migMemoryMib);
        assertThat(r.inventoryChanged()).containsExactly(H100);
        assertThat(r.notes()).filteredOn(n -> n.startsWith("destroyed idle MIG instance 1g.10gb@")).hasSize(3);
        assertThat(gpu(fleet, H100, 1).migInstances()).as("other GPUs keep their layout").hasSize(7);

        SimulatedFleet again = fleet();
        assertThat(only(start(again, H100, "m2", 0, "3g.40gb@4"), AllocationEventType.STARTED).migInstanceUuid())
                .as("the same slot on the same node gets the same UUID").isEqualTo(created.uuid());
    }

    @Test
    void aBusyInstanceInTheWayRefusesTheSlot() {
        String busy = only(start(H100, "small", 1, "1g.10gb@5"), AllocationEventType.STARTED).migInstanceUuid();

        Reports r = start(H100, "big", 1, "3g.40gb@4");

        AllocationEvent refused = only(r, AllocationEventType.LOST);
        assertThat(refused.heldBy()).containsExactly("small");
        assertThat(refused.detail()).contains("cannot start: MIG slot 3g.40gb@4", "slices 4-7", "1g.10gb@5", busy,
                "busy with small");
        assertThat(gpu(fleet, H100, 1).migInstances()).hasSize(7);
        assertThat(only(start(H100, "again", 1, "1g.10gb@5"), AllocationEventType.LOST).detail())
                .contains("is busy with small");
    }

    @ParameterizedTest(name = "{1} on {0} GPU {2}")
    @CsvSource(delimiter = '|', value = {
        "sim-a100-0     | 1g.5gb@0  | 0 | GPU 0 (A100-SXM4-40GB) on sim-a100-0 is not in MIG mode",
        "sim-a100-mig-0 | 3g.40gb@0 | 0 | has no MIG profile 3g.40gb (it has [1g.10gb, 1g.5gb, 1g.5gb+me, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb])",
        "sim-a100-mig-0 | 3g.20gb@2 | 0 | profile 3g.20gb cannot start at slice 2 (NVIDIA's placements for it: [0, 4])",
        "sim-a100-mig-0 | 1g.5gb@7  | 0 | profile 1g.5gb cannot start at slice 7 (NVIDIA's placements for it: [0, 1, 2, 3, 4, 5, 6])",
        "sim-a100-mig-0 | 1g.5gb@9  | 0 | MIG slot '1g.5gb@9': the start after '@' must be a memory slice 0-7, was '9'",
        "sim-a100-mig-0 | 1g.5gb@0  | 8 | GPU 8 does not exist on sim-a100-mig-0"})
    void slotsTheGpuCannotHaveAreRefusedWithTheReason(String node, String slot, int gpu, String reason) {
        Reports r = start(node, "r", gpu, slot);

        AllocationEvent exited = only(r, AllocationEventType.EXITED);
        assertThat(exited).as("reports: %s", r).isNotNull();
        assertThat(exited.exitCode()).isEqualTo(SimulatedFleet.EXIT_CANNOT_START);
        assertThat(exited.detail()).startsWith("cannot start: ").contains(reason);
        assertThat(only(r, AllocationEventType.STARTED)).isNull();
    }

    @Test
    void anA100ThreeSliceSlotAtFourIsBilledAsItsProfileAndItsReadingsFollowTheWork() {
        Reports r = start(A100, "a3", 3, "3g.20gb@4");
        String uuid = only(r, AllocationEventType.STARTED).migInstanceUuid();

        clock.advance(Duration.ofSeconds(10));
        GpuReading reading = fleet.sample().stream().filter(s -> s.nodeId().equals(A100)).findFirst().orElseThrow()
                .gpus().get(3);
        Reports ticked = fleet.advance();

        assertThat(ticked.usage()).allSatisfy(u -> assertThat(u.sku().code()).isEqualTo("A100-SXM4-40GB/mig-3g.20gb"));
        assertThat(reading.migInstances()).filteredOn(m -> m.uuid().equals(uuid)).singleElement()
                .satisfies(m -> assertThat(m.grEngineActive()).isBetween(0.85, 0.99));
        assertThat(reading.migInstances()).filteredOn(m -> !m.uuid().equals(uuid))
                .extracting(MigReading::grEngineActive).containsOnly(0.0);
        assertThat(reading.gpuUtilPercent()).as("3 of 7 compute slices busy").isBetween(3 / 7.0 * 85, 3 / 7.0 * 99);
    }
}
