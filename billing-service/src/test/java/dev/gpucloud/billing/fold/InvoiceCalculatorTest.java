package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.GpuModels;
import static dev.gpucloud.billing.fold.Usage.JUNE;
import static dev.gpucloud.billing.fold.Usage.MAY;
import static dev.gpucloud.billing.fold.Usage.iv;
import static dev.gpucloud.billing.fold.Usage.mkA100;
import static dev.gpucloud.billing.fold.Usage.mkAllocation;
import static dev.gpucloud.contracts.events.CapacityType.ON_DEMAND;
import static dev.gpucloud.contracts.events.CapacityType.SPOT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.Sku;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Not a @QuarkusTest: the calculator is plain Java, so the test simply calls it. */
class InvoiceCalculatorTest {

    private final InvoiceCalculator calculator =
            new InvoiceCalculator(BillingPolicy.awsPerSecond(), PriceCatalog.awsDefaults());

    @Test
    void one_line_per_job_sku_and_capacity_type() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(
                mkA100("alloc-1", "job-1", iv(0, 100)),
                mkA100("alloc-2", "job-1", iv(0, 50)),
                mkA100("alloc-3", "job-2", iv(0, 120)),
                mkAllocation("alloc-4", "job-1", Sku.wholeGpu(GpuModels.V100_SXM2_16GB), 1, SPOT, iv(0, 3600))));

        assertThat(invoice.lines()).containsExactly(
                new InvoiceLine("job-1", "A100-SXM4-40GB", ON_DEMAND, 160, 2_745_000, 122_000, null),
                new InvoiceLine("job-1", "V100-SXM2-16GB", SPOT, 3600, 930_000, 930_000, null),
                new InvoiceLine("job-2", "A100-SXM4-40GB", ON_DEMAND, 120, 2_745_000, 91_500, null));
        assertThat(invoice.totalMicros()).isEqualTo(1_143_500);
        assertThat(invoice.totalUsd()).isEqualTo("1.14");
    }

    /**
     * A job's rerun pays what it used, not a second minimum: the platform lost the first attempt (its host died)
     * 10 s in, and the second ran 20 s. Allocations named otherwise each pay the minimum.
     */
    @Test
    void a_rerun_is_billed_without_a_second_minimum() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(
                mkA100("job-1-a1-r0", "job-1", iv(0, 10)),
                mkA100("job-1-a2-r0", "job-1", iv(30, 50.5)),
                mkA100("job-1-a2-r1", "job-1", iv(30, 35)),
                mkA100("alloc-9", "job-2", iv(0, 10)),
                mkA100("job-3-a1-r0", "job-3", iv(0, 5)),
                mkA100("job-3-a1-r1", "job-3", iv(0, 5))));

        assertThat(invoice.lines()).extracting(InvoiceLine::jobId, InvoiceLine::seconds).containsExactly(
                tuple("job-1", 60L + 21 + 5), tuple("job-2", 60L), tuple("job-3", 120L));
    }

    @Test
    void units_multiply_an_allocations_seconds() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(
                mkAllocation("alloc-1", "job-1", Sku.wholeGpu(GpuModels.H100_SXM5_80GB), 8, ON_DEMAND, iv(0, 3600))));

        assertThat(invoice.lines()).singleElement().satisfies(line -> {
            assertThat(line.seconds()).isEqualTo(8 * 3600);
            assertThat(line.amountMicros()).isEqualTo(55_040_000);
        });
    }

    @Test
    void a_line_amount_rounds_half_even_to_the_micro_usd() {
        // 61 s x 2,745,000 / 3600 = 46,512.5 micro-USD: half-even keeps the even 46,512.
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(mkA100("alloc-1", "job-1", iv(0, 61))));

        assertThat(invoice.lines().get(0).amountMicros()).isEqualTo(46_512);
    }

    @Test
    void a_mig_slice_is_billed_at_its_share() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(mkAllocation("alloc-1", "job-1",
                new Sku(GpuModels.H100_SXM5_80GB, "1g.10gb", 1000), 2, ON_DEMAND, iv(0, 3600))));

        assertThat(invoice.lines()).singleElement().satisfies(line -> {
            assertThat(line.sku()).isEqualTo("H100-SXM5-80GB/mig-1g.10gb");
            assertThat(line.rateMicrosPerHour()).isEqualTo(982_857);
            assertThat(line.amountMicros()).isEqualTo(2 * 982_857);
        });
    }

    @Test
    void a_gpu_fraction_is_billed_at_its_share() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(mkAllocation("alloc-1", "job-1",
                new Sku(GpuModels.A10G, null, 250), 1, ON_DEMAND, iv(0, 7200))));

        assertThat(invoice.lines()).singleElement().satisfies(line -> {
            assertThat(line.sku()).isEqualTo("A10G/250m");
            assertThat(line.amountMicros()).isEqualTo(503_000);
        });
    }

    @Test
    void an_unknown_sku_is_held_with_its_seconds_and_the_reason() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(mkAllocation("alloc-1", "job-1",
                Sku.wholeGpu("MI300X"), 1, ON_DEMAND, iv(0, 3600))));

        assertThat(invoice.lines()).singleElement().satisfies(line -> {
            assertThat(line.seconds()).isEqualTo(3600);
            assertThat(line.amountMicros()).isZero();
            assertThat(line.flag()).startsWith("held: ").contains("'MI300X' is not in the price catalog");
        });
    }

    @Test
    void an_allocation_spanning_two_months_is_on_both_invoices() {
        MeteredAllocation allocation = mkA100("alloc-1", "job-1", iv("2025-05-31T23:00:00Z", "2025-06-01T01:00:00Z"));

        assertThat(calculator.invoice("acme", MAY, List.of(allocation)).lines().get(0).seconds()).isEqualTo(3600);
        assertThat(calculator.invoice("acme", JUNE, List.of(allocation)).lines().get(0).seconds()).isEqualTo(3600);
        assertThat(calculator.invoice("acme", JUNE.plusMonths(1), List.of(allocation)).lines()).isEmpty();
    }

    @Test
    void a_short_allocation_is_billed_the_minimum() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of(mkA100("alloc-1", "job-1", iv(0, 5))));

        assertThat(invoice.lines().get(0).seconds()).isEqualTo(60);
    }

    @Test
    void another_tenants_allocation_never_reaches_an_invoice() {
        MeteredAllocation other = new MeteredAllocation("alloc-9", "globex", "job-9", Sku.wholeGpu(GpuModels.A10G), 1,
                ON_DEMAND, IntervalUnion.of(iv(0, 60)));

        assertThatThrownBy(() -> calculator.invoice("acme", JUNE, List.of(other)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tenant 'globex'");
    }

    @Test
    void no_usage_is_an_empty_invoice() {
        Invoice invoice = calculator.invoice("acme", JUNE, List.of());

        assertThat(invoice.lines()).isEmpty();
        assertThat(invoice.totalUsd()).isEqualTo("0.00");
    }

    static Stream<Arguments> totals() {
        return Stream.of(
                Arguments.of("a total below half a cent rounds to zero", 4_999, "0.00"),
                Arguments.of("exactly half a cent rounds to the even cent (down)", 5_000, "0.00"),
                Arguments.of("exactly half a cent rounds to the even cent (up)", 15_000, "0.02"),
                Arguments.of("just above half a cent rounds up", 5_001, "0.01"),
                Arguments.of("dollars keep their cents", 12_345_678, "12.35"),
                Arguments.of("a large total stays exact", 9_000_000_000_005_000L, "9000000000.00"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("totals")
    void the_usd_total_rounds_half_even_to_cents(String behaviour, long micros, String usd) {
        assertThat(MicroUsd.toUsdCents(micros)).isEqualTo(usd);
    }
}
