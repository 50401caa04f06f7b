package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.contracts.events.JobSpec;
import static dev.gpucloud.scheduler.sim.cluster.Specs.mkJob;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.scheduler.sim.trace.TraceFormatException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class FleetSpecTest {

    private static final String HEADER = "host_type,count,gpu_model,gpus,gpu_memory_mib,nvlink,cpu_milli,memory_mib,"
            + "fabric,spot_share,price_per_hour,spot_price_per_hour";

    @TempDir
    Path dir;

    private final FleetSpec fleet = FleetSpec.load(fixture("fleet-small.csv"));

    @Test
    void each_row_is_a_host_type_with_exact_prices_in_micro_usd() {
        assertThat(fleet.name()).isEqualTo("fleet-small");
        assertThat(fleet.hostTypes()).extracting(HostType::name)
                .containsExactly("p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "p3.2xlarge");
        assertThat(fleet.hostType("p4d.24xlarge")).contains(new HostType("p4d.24xlarge", 2, GpuModels.A100_SXM4_40GB, 8,
                40_960, true, 96_000, 1_179_648, "efa-p4d", 1, 32_772_600, 13_109_000));
        assertThat(fleet.hostType("p5.48xlarge").orElseThrow().spotPriceMicrosPerHour()).isZero();
        assertThat(fleet.hostType("g5.xlarge").orElseThrow().fabric()).isNull();
    }

    @Test
    void the_fleet_builds_numbered_hosts_with_the_last_of_each_type_on_spot() {
        ClusterModel cluster = fleet.build();

        assertThat(cluster.hostCount()).isEqualTo(11);
        assertThat(cluster.gpuCount()).isEqualTo(32);
        assertThat(cluster.gpusByModel()).isEqualTo(Map.of(GpuModels.A100_SXM4_40GB, 16, GpuModels.H100_SXM5_80GB, 8,
                GpuModels.A10G, 5, GpuModels.V100_SXM2_16GB, 3));
        assertThat(cluster.hosts()).extracting(HostInventory::nodeId, HostInventory::capacityType).startsWith(
                org.assertj.core.groups.Tuple.tuple("p4d.24xlarge-000", CapacityType.ON_DEMAND),
                org.assertj.core.groups.Tuple.tuple("p4d.24xlarge-001", CapacityType.SPOT),
                org.assertj.core.groups.Tuple.tuple("p5.48xlarge-000", CapacityType.ON_DEMAND),
                org.assertj.core.groups.Tuple.tuple("g5.xlarge-000", CapacityType.ON_DEMAND),
                org.assertj.core.groups.Tuple.tuple("g5.xlarge-001", CapacityType.ON_DEMAND),
                org.assertj.core.groups.Tuple.tuple("g5.xlarge-002", CapacityType.SPOT));
        assertThat(cluster.hostCount(CapacityType.SPOT)).isEqualTo(5);

        HostInventory spotP4d = cluster.hosts().get(1);
        assertThat(spotP4d.priceMicrosPerHour()).isEqualTo(13_109_000);
        assertThat(spotP4d.instanceType()).isEqualTo("p4d.24xlarge");
        assertThat(spotP4d.rdmaFabric()).isEqualTo("efa-p4d");
        assertThat(spotP4d.gpus()).extracting(GpuDevice::nvlinkIsland).containsOnly(0);
        assertThat(cluster.hosts().get(3).gpus()).extracting(GpuDevice::nvlinkIsland).containsOnly(-1);
    }

    @Test
    void the_fleet_costs_less_per_hour_than_all_on_demand() {
        // on demand: 2 x 32.7726 + 98.32 + 5 x 1.006 + 3 x 3.06 = 178.0752 USD/h
        assertThat(fleet.onDemandPriceMicrosPerHour()).isEqualTo(178_075_200);
        // 32.7726 + 13.109 + 98.32 + 2 x 1.006 + 3 x 0.4024 + 2 x 3.06 + 0.918 = 154.4588 USD/h
        assertThat(fleet.build().priceMicrosPerHour()).isEqualTo(154_458_800);
    }

    @Test
    void a_spot_job_lands_on_spot_capacity_with_the_production_placer() {
        Decision placement = place(
                mkJob(1, 8, List.of(GpuModels.A100_SXM4_40GB), Interconnect.NONE, CapacityPreference.SPOT),
                fleet.build().toFleet());
        assertThat(placement.assignments()).extracting(Assignment::nodeId).containsExactly("p4d.24xlarge-001");
    }

    @ParameterizedTest(name = "{0} hosts x {1} -> {2} spot")
    @CsvSource({"10, 0.25, 3", "3, 0.5, 2", "4, 0, 0", "1, 1, 1", "7, 0.1, 1", "100, 0.333, 33"})
    void the_spot_share_rounds_to_whole_hosts_halves_up(int count, String share, int spot) {
        Path file = write(dir, "fleet.csv", HEADER, "g5.xlarge," + count + ",A10G,1,24576,no,4000,16384,," + share + ",1.006,0.4");
        assertThat(FleetSpec.load(file).hostTypes().get(0).spotHosts()).isEqualTo(spot);
    }

    static Stream<Arguments> malformedRows() {
        return Stream.of(
                Arguments.of("spot share above 1", "g5.xlarge,2,A10G,1,24576,no,4000,16384,,1.5,1.006,0.4",
                        "fleet.csv:2: column 'spot_share': '1.5' is out of range (must be within 0..1)"),
                Arguments.of("spot share without spot price", "g5.xlarge,2,A10G,1,24576,no,4000,16384,,0.5,1.006,",
                        "fleet.csv:2: column 'spot_price_per_hour': is empty, but spot_share is 0.5"),
                Arguments.of("price is text", "g5.xlarge,2,A10G,1,24576,no,4000,16384,,0,cheap,",
                        "fleet.csv:2: column 'price_per_hour': 'cheap' is not a number"),
                Arguments.of("nvlink is neither yes nor no", "g5.xlarge,2,A10G,1,24576,maybe,4000,16384,,0,1,",
                        "fleet.csv:2: column 'nvlink': 'maybe' is not yes or no"),
                Arguments.of("count is negative", "g5.xlarge,-2,A10G,1,24576,no,4000,16384,,0,1,",
                        "fleet.csv:2: column 'count': '-2' is out of range (must be within 0..100000)"),
                Arguments.of("gpu model is empty", "g5.xlarge,2,,1,24576,no,4000,16384,,0,1,",
                        "fleet.csv:2: column 'gpu_model': is empty"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedRows")
    void a_malformed_row_fails_the_load_naming_file_line_and_column(String name, String row, String message) {
        Path file = write(dir, "fleet.csv", HEADER, row);
        assertThatThrownBy(() -> FleetSpec.load(file)).isInstanceOf(TraceFormatException.class).hasMessage(message);
    }

    @Test
    void a_host_type_named_twice_is_an_error() {
        Path file = write(dir, "fleet.csv", HEADER, "g5.xlarge,2,A10G,1,24576,no,4000,16384,,0,1,",
                "g5.xlarge,3,A10G,1,24576,no,4000,16384,,0,1,");
        assertThatThrownBy(() -> FleetSpec.load(file)).hasMessage("fleet.csv:3: column 'host_type': 'g5.xlarge' repeats line 2");
    }

    @Test
    void a_fleet_of_no_host_types_and_an_empty_or_missing_file_are_errors() {
        assertThatThrownBy(() -> FleetSpec.load(write(dir, "fleet.csv", "# nothing yet", HEADER)))
                .hasMessage("fleet.csv: the fleet has no host types");
        assertThatThrownBy(() -> FleetSpec.load(fixture("empty.csv")))
                .hasMessageStartingWith("empty.csv: file is empty; expected a header row with columns host_type, count");
        assertThatThrownBy(() -> FleetSpec.load(dir.resolve("absent.csv"))).hasMessageStartingWith("absent.csv: no such file");
    }
    private static Decision place(JobSpec spec, Fleet fleet) {
        return new PlacementFramework(Profile.builder("test").heartbeatTimeoutMillis(Long.MAX_VALUE / 4).build())
                .place(fleet, PlacementRequest.of("job", "t", 1, spec), ClusterModel.SIM_EPOCH.toEpochMilli());
    }
}
