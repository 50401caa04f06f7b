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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PriceCatalogTest {

    private static final PriceCatalog CATALOG = PriceCatalog.awsDefaults();

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
                Arguments.of("an unknown GPU model bills at the default rate, flagged",
                        Sku.wholeGpu("MI300X"), ON_DEMAND, 6_880_000, "not in the price catalog"),
                Arguments.of("an unknown model's fraction is the default rate's share",
                        new Sku("MI300X", null, 500), SPOT, 3_440_000, "not in the price catalog"),
                Arguments.of("a capacity type without a price falls back to on-demand, flagged",
                        Sku.wholeGpu(A100_SXM4_40GB), SPOT, 2_745_000, "no SPOT price for A100-SXM4-40GB"),
                Arguments.of("a MIG profile on a GPU without MIG bills as a whole GPU, flagged",
                        new Sku(V100_SXM2_16GB, "1g.10gb", 1000), ON_DEMAND, 3_060_000, "does not fit V100-SXM2-16GB"),
                Arguments.of("a MIG profile that is not <n>g.<m>gb bills as a whole GPU, flagged",
                        new Sku(H100_SXM5_80GB, "half", 1000), ON_DEMAND, 6_880_000, "MIG profile 'half'"),
                Arguments.of("a MIG profile with more slices than the GPU bills as a whole GPU, flagged",
                        new Sku(A100_SXM4_40GB, "8g.40gb", 1000), ON_DEMAND, 2_745_000, "7 MIG slices"));
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

    static Stream<Arguments> badEntries() {
        return Stream.of(
                Arguments.of("an entry without a capacity type", "A100-SXM4-40GB=5", "is not MODEL/CAPACITY=MICROS"),
                Arguments.of("an entry without a value", "A100-SXM4-40GB/SPOT", "is not MODEL/CAPACITY=MICROS"),
                Arguments.of("an unknown capacity type", "A100-SXM4-40GB/CHEAP=5", "capacity type 'CHEAP'"),
                Arguments.of("a price that is not a number", "A100-SXM4-40GB/SPOT=1.5", "'1.5' is not a whole number"),
                Arguments.of("a negative price", "A100-SXM4-40GB/SPOT=-5", "must be >= 0"),
                Arguments.of("a blank model", " /SPOT=5", "is not MODEL/CAPACITY=MICROS"));
    }

    @ParameterizedTest(name = "{0} is refused, quoting it")
    @MethodSource("badEntries")
    void bad_entries_are_refused(String behaviour, String entry, String message) {
        assertThatThrownBy(() -> CATALOG.withEntries(entry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }
}
