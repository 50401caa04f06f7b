package dev.gpucloud.billing.fold.advisor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.billing.fold.BillingPolicy;
import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.IntervalUnion;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The cost advisor: the commitment level that minimises cost, and the month priced four ways. */
class CostAdvisorTest {

    private static final long H = 3600;
    private static final YearMonth JUNE = YearMonth.of(2025, 6);
    private static final CostAdvisor ADVISOR = new CostAdvisor(BillingPolicy.awsPerSecond(),
            PriceCatalog.awsDefaults(), List.of(), AdvisorAssumptions.defaults());

    static Stream<Arguments> levels() {
        return Stream.of(
                Arguments.of("one month of 10 h: commit all 10", List.of(10 * H), 600_000, 1_000_000, 10),
                Arguments.of("10 h in two of three months: still worth committing 10", List.of(0L, 10 * H, 10 * H),
                        600_000, 1_000_000, 10),
                Arguments.of("10 h in one of three months: not worth it", List.of(0L, 0L, 10 * H),
                        600_000, 1_000_000, 0),
                Arguments.of("1.5 h: the half hour is cheaper on demand", List.of(H + H / 2), 600_000, 1_000_000, 1),
                Arguments.of("1.7 h: the partial hour is cheaper committed", List.of(H + 7 * H / 10), 600_000,
                        1_000_000, 2),
                Arguments.of("5, 8 and 12 h: the level at the 40% quantile", List.of(5 * H, 8 * H, 12 * H),
                        600_000, 1_000_000, 8),
                Arguments.of("a commitment dearer than on demand never pays", List.of(10 * H), 1_000_000, 1_000_000, 0),
                Arguments.of("no usage: no commitment", List.of(), 600_000, 1_000_000, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("levels")
    void the_best_commitment_level_minimises_the_cost(String behaviour, List<Long> used, long reserved, long onDemand,
            long hours) {
        assertThat(CostAdvisor.bestHours(used, reserved, onDemand)).isEqualTo(hours);
        for (long other = 0; other <= 15; other++) {
            assertThat(CostAdvisor.cost(used, hours, reserved, onDemand))
                    .isLessThanOrEqualTo(CostAdvisor.cost(used, other, reserved, onDemand));
        }
    }

    @Test
    void training_goes_to_spot_and_inference_to_a_commitment() {
        Instant t0 = Instant.parse("2025-06-02T00:00:00Z");
        MeteredAllocation training = allocation("a1", "train-llm", GpuModels.A100_SXM4_40GB, CapacityType.ON_DEMAND,
                t0, 10 * H);
        MeteredAllocation inference = allocation("a2", "inference-api", GpuModels.V100_SXM2_16GB,
                CapacityType.ON_DEMAND, t0, 100 * H);

        CostAdvice advice = ADVISOR.advise("acme", JUNE, Map.of(JUNE, List.of(training, inference)));

        assertThat(advice.billedMicros()).isEqualTo(27_450_000 + 306_000_000);
        assertThat(advice.onDemandMicros()).isEqualTo(27_450_000 + 306_000_000);
        // A100 has no SPOT price: assumed 30% of 2,745,000 = 823,500 per GPU-hour
        assertThat(advice.withSpotMicros()).isEqualTo(8_235_000 + 306_000_000);
        // V100 has a RESERVED price (1.84 USD/h): commit the 100 hours used
        assertThat(advice.bestMicros()).isEqualTo(8_235_000 + 184_000_000);
        assertThat(advice.spotTolerantSeconds()).isEqualTo(10 * H);
        assertThat(advice.commitments()).singleElement().satisfies(c -> {
            assertThat(c.sku()).isEqualTo(GpuModels.V100_SXM2_16GB);
            assertThat(c.hours()).isEqualTo(100);
            assertThat(c.reservedMicrosPerHour()).isEqualTo(1_840_000);
            assertThat(c.months()).isEqualTo(1);
        });
        assertThat(advice.assumptions()).anySatisfy(a -> assertThat(a).contains("spot-tolerant"));
    }

    @Test
    void usage_already_on_spot_is_spot_tolerant_and_months_before_the_first_usage_do_not_count() {
        Instant may = Instant.parse("2025-05-02T00:00:00Z");
        Instant june = Instant.parse("2025-06-02T00:00:00Z");
        MeteredAllocation spot = allocation("s1", "web", GpuModels.V100_SXM2_16GB, CapacityType.SPOT, june, 2 * H);
        MeteredAllocation mayServe = allocation("m1", "serve", GpuModels.A100_SXM4_40GB, CapacityType.ON_DEMAND,
                may, 4 * H);
        MeteredAllocation juneServe = allocation("m2", "serve", GpuModels.A100_SXM4_40GB, CapacityType.ON_DEMAND,
                june, 4 * H);

        CostAdvice advice = ADVISOR.advise("acme", JUNE, Map.of(YearMonth.of(2025, 4), List.of(),
                YearMonth.of(2025, 5), List.of(mayServe), JUNE, List.of(spot, juneServe)));

        assertThat(advice.spotTolerantSeconds()).isEqualTo(2 * H);
        assertThat(advice.commitments()).singleElement().satisfies(c -> {
            assertThat(c.months()).isEqualTo(2);
            assertThat(c.hours()).isEqualTo(4);
            assertThat(c.reservedMicrosPerHour()).isEqualTo(1_647_000); // 60% of 2,745,000
        });
        assertThat(advice.bestMicros()).isEqualTo(2 * 930_000 + 4 * 1_647_000);
    }

    private static MeteredAllocation allocation(String id, String job, String model, CapacityType type, Instant from,
            long seconds) {
        return new MeteredAllocation(id, "acme", job, Sku.wholeGpu(model), 1, type,
                IntervalUnion.of(Interval.of(from, from.plusSeconds(seconds))));
    }
}
