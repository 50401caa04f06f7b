package dev.gpucloud.agent.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FleetSpecTest {

    private static final Instant NOW = Instant.parse("2025-01-01T00:00:00Z");

    private static List<HostInventory> fleet(String spec) {
        return FleetSpec.hosts(spec, "sim", "local-1a").stream().map(h -> h.inventory(NOW)).toList();
    }

    @Test
    void defaultFleetHasOneHostOfEachKind() {
        List<HostInventory> hosts = fleet(SimulationSettings.DEFAULT_FLEET);

        assertThat(hosts).extracting(HostInventory::nodeId)
                .containsExactly("sim-a100-0", "sim-h100-0", "sim-a10g-0", "sim-v100-spot-0");
        assertThat(hosts).extracting(HostInventory::instanceType)
                .containsExactly("p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "p3.2xlarge");
        assertThat(hosts).extracting(HostInventory::capacityType)
                .containsExactly(CapacityType.ON_DEMAND, CapacityType.ON_DEMAND, CapacityType.ON_DEMAND, CapacityType.SPOT);
        assertThat(hosts).extracting(HostInventory::priceMicrosPerHour)
                .containsExactly(21_960_000L, 55_040_000L, 1_006_000L, 930_000L);
        assertThat(hosts).extracting(HostInventory::rdmaFabric).containsExactly("a", "b", null, null);
        assertThat(hosts).extracting(HostInventory::zone).containsOnly("local-1a");
        assertThat(hosts).extracting(HostInventory::backend).containsOnly("simulated");
        assertThat(hosts.get(0).switchPath()).containsExactly("spine-1", "leaf-1");
        assertThat(hosts.get(2).switchPath()).isEmpty();
    }

    static Stream<Arguments> models() {
        return Stream.of(
                Arguments.of("a100x8", "A100-SXM4-40GB", 40_960L, 8, 0),
                Arguments.of("h100x8", "H100-SXM5-80GB", 81_559L, 8, 0),
                Arguments.of("a10g", "A10G", 23_028L, 1, -1),
                Arguments.of("v100-spot", "V100-SXM2-16GB", 16_384L, 1, -1));
    }

    @ParameterizedTest(name = "{0} has {3} x {1}")
    @MethodSource("models")
    void gpusCarryTheModelsFigures(String spec, String model, long memoryMib, int count, int island) {
        List<GpuDevice> gpus = fleet(spec).get(0).gpus();
        assertThat(gpus).hasSize(count);
        assertThat(gpus).extracting(GpuDevice::model).containsOnly(model);
        assertThat(gpus).extracting(GpuDevice::memoryMib).containsOnly(memoryMib);
        assertThat(gpus).extracting(GpuDevice::nvlinkIsland).containsOnly(island);
        assertThat(gpus).extracting(GpuDevice::index).containsExactlyElementsOf(
                java.util.stream.IntStream.range(0, count).boxed().toList());
    }

    @Test
    void gpuUuidsAreUniqueAndStableAcrossRestarts() {
        List<String> first = fleet("a100x8:2,h100x8").stream().flatMap(h -> h.gpus().stream()).map(GpuDevice::uuid).toList();
        List<String> again = fleet("a100x8:2,h100x8").stream().flatMap(h -> h.gpus().stream()).map(GpuDevice::uuid).toList();
        assertThat(first).hasSize(24).doesNotHaveDuplicates().allMatch(u -> u.startsWith("GPU-"));
        assertThat(again).isEqualTo(first);
        List<String> otherPrefix = FleetSpec.hosts("a100x8:2,h100x8", "other", "z").stream()
                .flatMap(h -> h.gpus().stream()).map(GpuDevice::uuid).toList();
        assertThat(otherPrefix).doesNotContainAnyElementsOf(first);
    }

    @Test
    void countsNumberHostsPerNameAndFourHostsShareALeaf() {
        List<HostInventory> hosts = fleet("a100x8:5, a100x8-spot:1, a100x8:1");
        assertThat(hosts).extracting(HostInventory::nodeId).containsExactly(
                "sim-a100-0", "sim-a100-1", "sim-a100-2", "sim-a100-3", "sim-a100-4", "sim-a100-spot-0", "sim-a100-5");
        assertThat(hosts).extracting(h -> h.switchPath().get(1)).containsExactly(
                "leaf-1", "leaf-1", "leaf-1", "leaf-1", "leaf-2", "leaf-2", "leaf-2");
        assertThat(hosts.get(5).capacityType()).isEqualTo(CapacityType.SPOT);
        assertThat(hosts.get(5).priceMicrosPerHour()).isEqualTo(8_784_000L);
    }

    @Test
    void migHostsListSevenInstancesPerGpu() {
        HostInventory host = fleet("h100x8-mig").get(0);
        assertThat(host.nodeId()).isEqualTo("sim-h100-mig-0");
        assertThat(host.gpus()).allSatisfy(gpu -> {
            assertThat(gpu.migEnabled()).isTrue();
            assertThat(gpu.migInstances()).hasSize(7).allSatisfy(m -> assertThat(m.profile()).isEqualTo("1g.10gb"));
        });
    }

    static Stream<Arguments> badSpecs() {
        return Stream.of(
                Arguments.of("", "empty"),
                Arguments.of(" , ", "no entries"),
                Arguments.of("t4x4:1", "unknown host profile \"t4x4\""),
                Arguments.of("a100x8:two", "count \"two\" is not a whole number"),
                Arguments.of("a100x8:0", "count must be at least 1"),
                Arguments.of("a10g-mig", "A10G does not support MIG"),
                Arguments.of("a10g:10001", "more than 10000 hosts"));
    }

    @ParameterizedTest(name = "\"{0}\" is refused: {1}")
    @MethodSource("badSpecs")
    void refusesABadSpecSayingWhy(String spec, String why) {
        assertThatThrownBy(() -> FleetSpec.hosts(spec, "sim", "z"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why);
    }
}
