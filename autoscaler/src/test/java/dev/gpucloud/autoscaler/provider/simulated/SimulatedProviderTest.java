package dev.gpucloud.autoscaler.provider.simulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.core.Catalog;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import dev.gpucloud.autoscaler.provider.ProviderInstance.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Plain JUnit: the provider runs on a clock the test moves. */
class SimulatedProviderTest {

    private static final long MIN = 60_000;
    private static final long HOUR = 3_600_000;

    private long now;

    private SimulatedProvider provider(SimulatedProviderConfig config) {
        return new SimulatedProvider(Catalog.aws(), () -> now, config);
    }

    private static SimulatedProviderConfig quiet() {
        return SimulatedProviderConfig.defaults(7).withInterruptionRate(0);
    }

    private static LaunchRequest mkLaunch(String id, String type, int count, Capacity capacity, boolean fallback,
            List<String> zones) {
        return new LaunchRequest(id, "train", type, count, capacity, fallback, zones, null, Map.of());
    }

    @Test
    void an_instance_is_pending_for_the_boot_delay_then_running() {
        SimulatedProvider p = provider(quiet().withBootDelay(Duration.ofSeconds(60)));
        p.launch(mkLaunch("r1", "p3.16xlarge", 2, Capacity.ON_DEMAND, false, List.of()));
        assertThat(p.instances()).extracting(ProviderInstance::state).containsOnly(State.PENDING);
        now = 59_999;
        assertThat(p.instances()).extracting(ProviderInstance::state).containsOnly(State.PENDING);
        now = 60_000;
        assertThat(p.instances()).hasSize(2).extracting(ProviderInstance::state).containsOnly(State.RUNNING);
    }

    @Test
    void a_zone_out_of_spot_capacity_refuses_with_insufficient_instance_capacity_and_its_zone() {
        SimulatedProvider p = provider(quiet().withSpotCapacity(0, Map.of("us-east-1a", 16, "us-east-1b", 8)));
        LaunchOutcome o = p.launch(mkLaunch("r1", "p3.16xlarge", 4, Capacity.SPOT, false,
                List.of("us-east-1a", "us-east-1b", "us-east-1c")));
        assertThat(o.launched()).hasSize(3).extracting(ProviderInstance::capacity).containsOnly(Capacity.SPOT);
        assertThat(o.launched()).extracting(ProviderInstance::zone)
                .containsExactly("us-east-1a", "us-east-1a", "us-east-1b");
        assertThat(o.errors()).extracting(LaunchOutcome.LaunchError::code)
                .containsOnly(SimulatedProvider.INSUFFICIENT_CAPACITY);
        assertThat(o.errors()).extracting(LaunchOutcome.LaunchError::zone).contains("us-east-1c");
        assertThat(p.spotGpusLeft("us-east-1a")).isZero();
    }

    @Test
    void released_spot_capacity_can_be_bought_again() {
        SimulatedProvider p = provider(quiet().withSpotCapacity(8, Map.of()));
        LaunchOutcome first = p.launch(mkLaunch("r1", "p3.16xlarge", 1, Capacity.SPOT, false, List.of("us-east-1a")));
        assertThat(p.launch(mkLaunch("r2", "p3.16xlarge", 1, Capacity.SPOT, false, List.of("us-east-1a"))).errors())
                .hasSize(1);
        p.release(List.of(first.launched().get(0).instanceId()));
        assertThat(p.launch(mkLaunch("r3", "p3.16xlarge", 1, Capacity.SPOT, false, List.of("us-east-1a"))).launched())
                .hasSize(1);
    }

    @Test
    void on_demand_fallback_buys_the_rest_on_demand() {
        SimulatedProvider p = provider(quiet().withSpotCapacity(8, Map.of()));
        LaunchOutcome o = p.launch(mkLaunch("r1", "p3.16xlarge", 3, Capacity.SPOT, true, List.of("us-east-1a")));
        assertThat(o.errors()).isEmpty();
        assertThat(o.launched()).extracting(ProviderInstance::capacity)
                .containsExactly(Capacity.SPOT, Capacity.ON_DEMAND, Capacity.ON_DEMAND);
    }

    @Test
    void a_request_id_launches_once() {
        SimulatedProvider p = provider(quiet());
        LaunchOutcome a = p.launch(mkLaunch("r1", "p3.2xlarge", 2, Capacity.ON_DEMAND, false, List.of()));
        now = 2 * MIN;
        LaunchOutcome b = p.launch(mkLaunch("r1", "p3.2xlarge", 2, Capacity.ON_DEMAND, false, List.of()));
        assertThat(b.launched()).extracting(ProviderInstance::instanceId)
                .containsExactlyElementsOf(a.launched().stream().map(ProviderInstance::instanceId).toList());
        assertThat(b.launched()).extracting(ProviderInstance::state).containsOnly(State.RUNNING);
        assertThat(p.instances()).hasSize(2);
    }

    @Test
    void releasing_unknown_or_terminated_ids_is_ignored() {
        SimulatedProvider p = provider(quiet());
        String id = p.launch(mkLaunch("r1", "p3.2xlarge", 1, Capacity.ON_DEMAND, false, List.of()))
                .launched().get(0).instanceId();
        p.release(List.of(id, "sim-nope"));
        p.release(List.of(id));
        assertThat(p.instances()).isEmpty();
    }

    @Test
    void an_unknown_type_is_refused_as_unsupported() {
        SimulatedProvider p = provider(quiet());
        LaunchOutcome o = p.launch(mkLaunch("r1", "x9.huge", 1, Capacity.ON_DEMAND, false, List.of()));
        assertThat(o.launched()).isEmpty();
        assertThat(o.errors()).extracting(LaunchOutcome.LaunchError::code).containsExactly(SimulatedProvider.UNSUPPORTED);
    }

    @Test
    void spot_prices_walk_within_a_fifth_and_nine_tenths_of_on_demand_and_repeat_with_the_seed() {
        SimulatedProvider a = provider(quiet());
        double onDemand = Catalog.aws().require("p3.16xlarge").onDemandUsdPerHour();
        List<Double> walk = new ArrayList<>();
        for (long h = 0; h < 2_000; h++) {
            now = h * HOUR;
            double price = a.spotUsdPerHour("p3.16xlarge");
            assertThat(price).isBetween(0.2 * onDemand - 1e-9, 0.9 * onDemand + 1e-9);
            walk.add(price);
        }
        assertThat(walk.stream().distinct().count()).isGreaterThan(100);
        now = 0;
        SimulatedProvider b = provider(quiet());
        now = 1_999 * HOUR;
        assertThat(b.spotUsdPerHour("p3.16xlarge")).isEqualTo(walk.get(1_999));
        assertThat(b.usdPerHour("p3.16xlarge", Capacity.ON_DEMAND)).isEqualTo(onDemand);
        assertThat(b.spotUsdPerHour("p4de.24xlarge")).isNaN();
    }

    @Test
    void spot_instances_are_reclaimed_at_the_configured_rate_and_reported_once() {
        SimulatedProvider p = provider(SimulatedProviderConfig.defaults(11).withInterruptionRate(0.5)
                .withSpotCapacity(100_000, Map.of()));
        p.launch(mkLaunch("spot", "p3.2xlarge", 400, Capacity.SPOT, false, List.of("us-east-1a")));
        p.launch(mkLaunch("od", "p3.2xlarge", 10, Capacity.ON_DEMAND, false, List.of("us-east-1a")));
        now = HOUR;
        List<SpotInterruption> firstHour = p.interruptedSince(0);
        // P(reclaimed within an hour) = 1 - e^-0.5 = 0.39: about 157 of 400
        assertThat(firstHour.size()).isBetween(120, 195);
        assertThat(firstHour).allSatisfy(i -> assertThat(i.atMillis()).isBetween(1L, HOUR));
        assertThat(p.instances()).hasSize(410 - firstHour.size());
        assertThat(p.instances()).filteredOn(i -> i.capacity() == Capacity.ON_DEMAND).hasSize(10);
        assertThat(p.interruptedSince(HOUR)).isEmpty();
        now = 2 * HOUR;
        assertThat(p.interruptedSince(HOUR)).isNotEmpty().allSatisfy(i -> assertThat(i.atMillis()).isGreaterThan(HOUR));
    }

    @Test
    void the_same_seed_and_calls_give_the_same_reclaims() {
        List<List<SpotInterruption>> runs = new ArrayList<>();
        for (int run = 0; run < 2; run++) {
            now = 0;
            SimulatedProvider p = provider(SimulatedProviderConfig.defaults(3).withInterruptionRate(1));
            p.launch(mkLaunch("r", "p3.16xlarge", 20, Capacity.SPOT, false, List.of()));
            now = 3 * HOUR;
            runs.add(p.interruptedSince(0));
        }
        assertThat(runs.get(0)).isNotEmpty().isEqualTo(runs.get(1));
    }

    @Test
    void the_wall_clock_drives_it_as_well() {
        SimulatedProvider p = new SimulatedProvider(Catalog.aws(), System::currentTimeMillis,
                quiet().withBootDelay(Duration.ZERO));
        p.launch(mkLaunch("r1", "p3.2xlarge", 1, Capacity.ON_DEMAND, false, List.of()));
        assertThat(p.instances()).extracting(ProviderInstance::state).containsExactly(State.RUNNING);
        assertThat(p.instances().get(0).launchedAt().toEpochMilli()).isCloseTo(System.currentTimeMillis(),
                org.assertj.core.data.Offset.offset(60_000L));
    }

    @Test
    void a_clock_that_goes_back_is_refused() {
        now = 10;
        SimulatedProvider p = provider(quiet());
        p.instances();
        now = 5;
        assertThatThrownBy(p::instances).isInstanceOf(IllegalStateException.class).hasMessageContaining("went back");
    }
}
