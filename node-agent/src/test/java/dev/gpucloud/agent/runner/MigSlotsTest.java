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

/** NVIDIA's placement rules and the slot plans made from them, table by table. */
class MigSlotsTest {

    /** An A100 40GB in MIG mode: 3g.20gb at 4 (busy with alloc-1), 1g.5gb at 0 and at 1 (idle). */
    static final List<GpuDevice> GPUS = List.of(new GpuDevice(0, "GPU-0", "A100-SXM4-40GB", 40960, "00000000:10:00.0", 0,
            true, List.of(new MigInstance(1, "3g.20gb", "MIG-3g", 19968, 4), new MigInstance(7, "1g.5gb", "MIG-a", 4864, 0),
                    new MigInstance(8, "1g.5gb", "MIG-b", 4864, 1))));
    static final Map<String, String> HOLDERS = Map.of("MIG-3g", "alloc-1");

    private static MigSlots.Plan plan(String slot) {
        return MigSlots.resolve("n", GPUS, List.of(0), MigSlot.parse(slot).orElseThrow(), HOLDERS::get);
    }

    @ParameterizedTest(name = "{0} {1}: {2}")
    @CsvSource(delimiter = '|', value = {
        "A100-SXM4-40GB | 40960  | 1g.5gb:1:0-6 1g.10gb:2:0,2,4,6 2g.10gb:2:0,2,4 3g.20gb:4:0,4 4g.20gb:4:0 7g.40gb:8:0",
        "A100-SXM4-80GB | 81920  | 1g.10gb:1:0-6 1g.20gb:2:0,2,4,6 2g.20gb:2:0,2,4 3g.40gb:4:0,4 4g.40gb:4:0 7g.80gb:8:0",
        "H100-SXM5-80GB | 81559  | 1g.10gb+me:1:0-6 1g.20gb:2:0,2,4,6 3g.40gb:4:0,4 7g.80gb:8:0",
        "H100 NVL       | 95830  | 1g.12gb:1:0-6 3g.47gb:4:0,4 7g.94gb:8:0",
        "H200           | 144384 | 1g.18gb:1:0-6 3g.71gb:4:0,4 7g.141gb:8:0"})
    void eachModelHasNvidiasProfilesAndPlacements(String model, long memoryMib, String table) {
        MigPlacements.Geometry geometry = MigPlacements.of(model, memoryMib).orElseThrow();
        for (String entry : table.split(" ")) {
            String[] parts = entry.split(":");
            MigPlacements.Profile profile = geometry.profile(parts[0]).orElseThrow(() -> new AssertionError(parts[0]));
            assertThat(profile.size()).as(parts[0]).isEqualTo(Integer.parseInt(parts[1]));
            List<Integer> starts = parts[2].equals("0-6") ? List.of(0, 1, 2, 3, 4, 5, 6)
                    : java.util.Arrays.stream(parts[2].split(",")).map(Integer::valueOf).toList();
            assertThat(profile.starts()).as(parts[0]).isEqualTo(starts);
        }
    }

    @Test
    void modelsWithoutMigHaveNoGeometry() {
        assertThat(MigPlacements.of("A10G", 23028)).isEmpty();
        assertThat(MigPlacements.of("V100-SXM2-16GB", 16384)).isEmpty();
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
        assertThat(wide.profile().size()).isEqualTo(2);
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
}
