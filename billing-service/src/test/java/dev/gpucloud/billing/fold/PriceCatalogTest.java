package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.GpuModels;
import static dev.gpucloud.contracts.events.GpuModels.A100_SXM4_40GB;
import static dev.gpucloud.contracts.events.GpuModels.A10G;
import static dev.gpucloud.contracts.events.GpuModels.H100_SXM5_80GB;
import static dev.gpucloud.contracts.events.GpuModels.V100_SXM2_16GB;
import static dev.gpucloud.contracts.events.CapacityType.ON_DEMAND;
import static dev.gpucloud.contracts.events.CapacityType.RESERVED;
import static dev.gpucloud.contracts.events.CapacityType.SPOT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PriceCatalogTest {

    private static final PriceCatalog CATALOG = PriceCatalog.awsDefaults().withPrice("A30", ON_DEMAND, 800_000);

    static Stream<Arguments> priced() {
        return Stream.of(
                Arguments.of("an A100 is a p4d.24xlarge's price over its 8 GPUs",
                        Sku.wholeGpu(A100_SXM4_40GB), ON_DEMAND, 2_745_000),
                Arguments.of("an H100 is a p5.48xlarge's price over its 8 GPUs",
                        Sku.wholeGpu(H100_SXM5_80GB), ON_DEMAND, 6_880_000),
                Arguments.of("an A10G is a g5.xlarge's price", Sku.wholeGpu(A10G), ON_DEMAND, 1_006_000),
                Arguments.of("a V100 on demand is a p3.2xlarge's price", Sku.wholeGpu(V100_SXM2_16GB), ON_DEMAND, 3_060_000),
                Arguments.of("a reserved V100 has its own price", Sku.wholeGpu(V100_SXM2_16GB), RESERVED, 1_840_000),
                Arguments.of("a spot V100 has its own price", Sku.wholeGpu(V100_SXM2_16GB), SPOT, 930_000),
                Arguments.of("a MIG slice costs its share of the GPU: 1g.10gb is 1/7 of an H100",
                        new Sku(H100_SXM5_80GB, "1g.10gb", 1000), ON_DEMAND, 982_857),
                Arguments.of("a 3g.20gb slice is 3/7 of an A100, rounded half-even to the micro-USD",
                        new Sku(A100_SXM4_40GB, "3g.20gb", 1000), ON_DEMAND, 1_176_429),
                Arguments.of("a +me slice costs what its plain twin costs: 1/7 of an H100",
                        new Sku(H100_SXM5_80GB, "1g.10gb+me", 1000), ON_DEMAND, 982_857),
                Arguments.of("an A30 has 4 compute slices, so its 1g.6gb is a quarter of it",
                        new Sku("A30", "1g.6gb", 1000), ON_DEMAND, 200_000),
                Arguments.of("a full 7g.40gb slice is the whole A100",
                        new Sku(A100_SXM4_40GB, "7g.40gb", 1000), ON_DEMAND, 2_745_000),
                Arguments.of("a GPU fraction costs milliGpu/1000 of the GPU: 250m of an A10G",
                        new Sku(A10G, null, 250), ON_DEMAND, 251_500),
                Arguments.of("a fraction of an A100: 125m", new Sku(A100_SXM4_40GB, null, 125), ON_DEMAND, 343_125));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("priced")
    void listed_skus_are_priced_exactly(String behaviour, Sku sku, CapacityType type, long microsPerHour) {
        SkuRate rate = CATALOG.rate(sku, type);

        assertThat(rate.microsPerHour()).isEqualTo(microsPerHour);
        assertThat(rate.isFlagged()).as("flag: %s", rate.flag()).isFalse();
    }

    static Stream<Arguments> fallbacks() {
        return Stream.of(
                Arguments.of("an unknown GPU model is held: rate 0, flagged with the reason",
                        Sku.wholeGpu("MI300X"), ON_DEMAND, 0, "held: GPU model 'MI300X' is not in the price catalog"),
                Arguments.of("an unknown model's fraction is held too",
                        new Sku("MI300X", null, 500), SPOT, 0, "held: GPU model 'MI300X' is not in the price catalog"),
                Arguments.of("a capacity type without a price falls back to on-demand, flagged",
                        Sku.wholeGpu(A100_SXM4_40GB), SPOT, 2_745_000, "no SPOT price for A100-SXM4-40GB"),
                Arguments.of("a MIG profile on a GPU without MIG bills as a whole GPU, flagged",
                        new Sku(V100_SXM2_16GB, "1g.10gb", 1000), ON_DEMAND, 3_060_000, "does not fit V100-SXM2-16GB"),
                Arguments.of("a MIG profile that is not <n>g.<m>gb bills as a whole GPU, flagged",
                        new Sku(H100_SXM5_80GB, "half", 1000), ON_DEMAND, 6_880_000, "MIG profile 'half'"),
                Arguments.of("a MIG profile with more slices than the GPU bills as a whole GPU, flagged",
                        new Sku(A100_SXM4_40GB, "8g.40gb", 1000), ON_DEMAND, 2_745_000, "7 MIG slices"),
                Arguments.of("a profile of another GPU family bills by its compute slices, flagged",
                        new Sku(A100_SXM4_40GB, "3g.40gb", 1000), ON_DEMAND, 1_176_429,
                        "'3g.40gb' is not one of the A100 40GB profiles"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fallbacks")
    void a_fallback_price_is_never_silent(String behaviour, Sku sku, CapacityType type, long microsPerHour,
            String flag) {
        SkuRate rate = CATALOG.rate(sku, type);

        assertThat(rate.microsPerHour()).isEqualTo(microsPerHour);
        assertThat(rate.flag()).contains(flag);
    }

    @Test
    void entries_override_single_prices() {
        PriceCatalog catalog = CATALOG.withEntries("""
                # spot A100 from a contract
                A100-SXM4-40GB/SPOT = 1100000
                A10G/mig-slices=0, H100-SXM5-80GB/on-demand=7000000
                """);

        assertThat(catalog.rate(Sku.wholeGpu(A100_SXM4_40GB), SPOT)).isEqualTo(SkuRate.priced(1_100_000));
        assertThat(catalog.rate(Sku.wholeGpu(H100_SXM5_80GB), ON_DEMAND)).isEqualTo(SkuRate.priced(7_000_000));
        assertThat(catalog.rate(Sku.wholeGpu(A100_SXM4_40GB), ON_DEMAND)).isEqualTo(SkuRate.priced(2_745_000));
        assertThat(catalog.size()).isEqualTo(CATALOG.size() + 1);
    }

    @Test
    void an_entry_with_an_effective_date_applies_from_that_date() {
        PriceCatalog catalog = CATALOG.withEntries("""
                A100-SXM4-40GB/SPOT@2025-07-01 = 1100000
                A100-SXM4-40GB/SPOT@2025-07-15T12:00:00Z=900000, A100-SXM4-40GB/ON_DEMAND@2025-08-01=2500000
                """);
        Sku a100 = Sku.wholeGpu(A100_SXM4_40GB);

        assertThat(catalog.rate(a100, SPOT, Instant.parse("2025-06-30T23:59:59Z")))
                .isEqualTo(SkuRate.flagged(2_745_000,
                        "no SPOT price for A100-SXM4-40GB in force yet: billed at its ON_DEMAND rate"));
        assertThat(catalog.rate(a100, SPOT, Instant.parse("2025-07-01T00:00:00Z"))).isEqualTo(SkuRate.priced(1_100_000));
        assertThat(catalog.rate(a100, SPOT, Instant.parse("2025-07-15T12:00:00Z"))).isEqualTo(SkuRate.priced(900_000));
        assertThat(catalog.rate(a100, ON_DEMAND, Instant.parse("2025-07-31T23:59:59Z"))).isEqualTo(SkuRate.priced(2_745_000));
        assertThat(catalog.rate(a100, ON_DEMAND, Instant.parse("2025-08-01T00:00:00Z"))).isEqualTo(SkuRate.priced(2_500_000));
        assertThat(catalog.size()).as("every dated entry counts").isEqualTo(CATALOG.size() + 3);
    }

    @Test
    void without_an_instant_the_rate_is_the_latest_entrys() {
        PriceCatalog catalog = CATALOG.withPrice(A100_SXM4_40GB, ON_DEMAND, Instant.parse("2030-01-01T00:00:00Z"), 1_000_000);

        assertThat(catalog.rate(Sku.wholeGpu(A100_SXM4_40GB), ON_DEMAND)).isEqualTo(SkuRate.priced(1_000_000));
        assertThat(catalog.gpuHourPrice(A100_SXM4_40GB, ON_DEMAND)).contains(1_000_000L);
    }

    @Test
    void undated_prices_are_in_force_from_a_fixed_past_date_and_not_before() {
        Sku v100 = Sku.wholeGpu(V100_SXM2_16GB);

        assertThat(CATALOG.rate(v100, SPOT, PriceCatalog.UNDATED_EFFECTIVE_FROM)).isEqualTo(SkuRate.priced(930_000));
        assertThat(CATALOG.rate(v100, SPOT, PriceCatalog.UNDATED_EFFECTIVE_FROM.minusSeconds(1)))
                .isEqualTo(SkuRate.held("no SPOT or ON_DEMAND price for V100-SXM2-16GB in force at "
                        + PriceCatalog.UNDATED_EFFECTIVE_FROM.minusSeconds(1)));
    }

    @Test
    void a_comment_runs_to_the_end_of_its_line_commas_included() {
        PriceCatalog catalog = CATALOG.withEntries(
                "# spot, repriced later, see the contract\nA100-SXM4-40GB/SPOT=1 # from the contract, signed in May");

        assertThat(catalog.rate(Sku.wholeGpu(A100_SXM4_40GB), SPOT)).isEqualTo(SkuRate.priced(1));
    }

    @Test
    void the_same_instant_replaces_an_entry() {
        PriceCatalog catalog = CATALOG.withEntries("A100-SXM4-40GB/SPOT@2025-07-01=1, A100-SXM4-40GB/SPOT@2025-07-01T00:00:00Z=2");

        assertThat(catalog.size()).isEqualTo(CATALOG.size() + 1);
        assertThat(catalog.rate(Sku.wholeGpu(A100_SXM4_40GB), SPOT)).isEqualTo(SkuRate.priced(2));
    }

    @Test
    void periods_cut_a_window_at_each_change_and_merge_equal_rates() {
        PriceCatalog catalog = CATALOG
                .withPrice(A100_SXM4_40GB, ON_DEMAND, Instant.parse("2025-06-10T00:00:00Z"), 3_600_000)
                .withPrice(A100_SXM4_40GB, ON_DEMAND, Instant.parse("2025-06-20T00:00:00Z"), 3_600_000)
                .withPrice(A100_SXM4_40GB, SPOT, Instant.parse("2025-06-25T00:00:00Z"), 1_000_000)
                .withPrice(H100_SXM5_80GB, ON_DEMAND, Instant.parse("2025-06-15T00:00:00Z"), 1);
        Interval june = Interval.month(java.time.YearMonth.of(2025, 6));

        assertThat(catalog.periods(Sku.wholeGpu(A100_SXM4_40GB), ON_DEMAND, june)).containsExactly(
                new PricePeriod(Interval.of(june.from(), Instant.parse("2025-06-10T00:00:00Z")), SkuRate.priced(2_745_000)),
                new PricePeriod(Interval.of(Instant.parse("2025-06-10T00:00:00Z"), june.to()), SkuRate.priced(3_600_000)));
        assertThat(catalog.periods(Sku.wholeGpu(A10G), ON_DEMAND, june))
                .containsExactly(new PricePeriod(june, SkuRate.priced(1_006_000)));
    }

    static Stream<Arguments> badEntries() {
        return Stream.of(
                Arguments.of("an entry without a capacity type", "A100-SXM4-40GB=5", "is not MODEL/CAPACITY=MICROS"),
                Arguments.of("an entry without a value", "A100-SXM4-40GB/SPOT", "is not MODEL/CAPACITY=MICROS"),
                Arguments.of("an unknown capacity type", "A100-SXM4-40GB/CHEAP=5", "capacity type 'CHEAP'"),
                Arguments.of("a price that is not a number", "A100-SXM4-40GB/SPOT=1.5", "'1.5' is not a whole number"),
                Arguments.of("a negative price", "A100-SXM4-40GB/SPOT=-5", "must be >= 0"),
                Arguments.of("a blank model", " /SPOT=5", "is not MODEL/CAPACITY=MICROS"),
                Arguments.of("an effective date that is not a date", "A100-SXM4-40GB/SPOT@July=5",
                        "effective date 'July' is not a UTC date"),
                Arguments.of("an effective instant without its zone", "A100-SXM4-40GB/SPOT@2025-07-01T00:00:00=5",
                        "effective date '2025-07-01T00:00:00'"),
                Arguments.of("an effective date on mig-slices", "A100-SXM4-40GB/mig-slices@2025-07-01=7",
                        "mig-slices cannot have an effective date"));
    }

    @ParameterizedTest(name = "{0} is refused, quoting it")
    @MethodSource("badEntries")
    void bad_entries_are_refused(String behaviour, String entry, String message) {
        assertThatThrownBy(() -> CATALOG.withEntries(entry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }
}
