package dev.gpucloud.agent.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand.MigSlot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Slot plans on a host's GPUs and the reasons the agent gives (the rules themselves: gpu-geometry). */
class MigSlotsTest {

    /** An A100 40GB in MIG mode: 3g.20gb at 4 (busy with alloc-1), 1g.5gb at 0 and at 1 (idle). */
    static final List<GpuDevice> GPUS = List.of(new GpuDevice(0, "GPU-0", "A100-SXM4-40GB", 40960, "00000000:10:00.0", 0,
            true, List.of(new MigInstance(1, "3g.20gb", "MIG-3g", 19968, 4), new MigInstance(7, "1g.5gb", "MIG-a", 4864, 0),
                    new MigInstance(8, "1g.5gb", "MIG-b", 4864, 1))));
    static final Map<String, String> HOLDERS = Map.of("MIG-3g", "alloc-1");

    private static MigSlots.Plan plan(String slot) {
        return MigSlots.resolve("n", GPUS, List.of(0), MigSlot.parse(slot).orElseThrow(), HOLDERS::get);
    }

    @Test
    void anInstanceAlreadyAtTheSlotIsUsed() {
        MigSlots.Plan plan = plan("1g.5gb@1");
        assertThat(plan.problem()).isNull();
        assertThat(plan.existing().uuid()).isEqualTo("MIG-b");
        assertThat(plan.creates()).isFalse();
    }

    @Test
    void aFreeRangeIsCreatedAndIdleInstancesInTheWayGoFirst() {
        assertThat(plan("1g.5gb@2").destroy()).isEmpty();
        assertThat(plan("1g.5gb@2").creates()).isTrue();
        MigSlots.Plan wide = plan("2g.10gb@0");
        assertThat(wide.creates()).isTrue();
        assertThat(wide.destroy()).extracting(MigInstance::uuid).containsExactly("MIG-a", "MIG-b");
        assertThat(wide.profile().memorySlices()).isEqualTo(2);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "3g.20gb@4 | MIG slot 3g.20gb@4 (MIG-3g) on GPU 0 (A100-SXM4-40GB) on n is busy with alloc-1",
        "1g.5gb@5  | slice 5 of GPU 0 (A100-SXM4-40GB) on n overlap instance 3g.20gb@4 (MIG-3g), busy with alloc-1",
        "7g.40gb@0 | slices 0-7",
        "4g.20gb@4 | profile 4g.20gb cannot start at slice 4 (NVIDIA's placements for it: [0])",
        "3g.40gb@0 | has no MIG profile 3g.40gb"})
    void refusals(String slot, String reason) {
        assertThat(plan(slot).problem()).contains(reason);
    }

    @Test
    void aSlotNeedsExactlyOneGpuInMigMode() {
        MigSlot slot = MigSlot.parse("1g.5gb@2").orElseThrow();
        assertThat(MigSlots.resolve("n", GPUS, List.of(), slot, HOLDERS::get).problem())
                .isEqualTo("MIG slot 1g.5gb@2 needs exactly one GPU in gpuIndices, got []");
        List<GpuDevice> plain = List.of(new GpuDevice(0, "GPU-0", "A100-SXM4-40GB", 40960, "x", 0, false, List.of()));
        assertThat(MigSlots.resolve("n", plain, List.of(0), slot, HOLDERS::get).problem())
                .isEqualTo("MIG slot 1g.5gb@2: GPU 0 (A100-SXM4-40GB) on n is not in MIG mode");
    }

    @Test
    void aSecondMediaExtensionsInstanceIsRefusedWhileTheFirstIsBusy() {
        List<GpuDevice> gpus = List.of(new GpuDevice(0, "GPU-0", "A30", 24576, "x", 0, true,
                List.of(new MigInstance(1, "1g.6gb+me", "MIG-me", 5_836, 3))));
        MigSlot slot = MigSlot.parse("1g.6gb+me@0").orElseThrow();
        assertThat(MigSlots.resolve("n", gpus, List.of(0), slot, Map.of("MIG-me", "alloc-9")::get).problem())
                .isEqualTo("MIG slot 1g.6gb+me@0: the media engines of GPU 0 (A30) on n are held by instance "
                        + "1g.6gb+me@3 (MIG-me), busy with alloc-9 (one +me instance per GPU)");
        assertThat(MigSlots.resolve("n", gpus, List.of(0), slot, uuid -> null).destroy())
                .extracting(MigInstance::uuid).containsExactly("MIG-me");
    }
}
