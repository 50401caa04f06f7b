package dev.gpucloud.billing.fold;

import static dev.gpucloud.billing.fold.Usage.JUNE;
import static dev.gpucloud.billing.fold.Usage.at;
import static dev.gpucloud.billing.fold.Usage.iv;
import static dev.gpucloud.contracts.events.CapacityType.ON_DEMAND;
import static dev.gpucloud.contracts.events.CapacityType.SPOT;
import static dev.gpucloud.contracts.events.GpuModels.A100_SXM4_40GB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An effective-dated catalog on the invoice: usage is priced at the rate in force at each second, a line
 * per rate. Not a @QuarkusTest: the calculator is plain Java.
 */
class PriceChangeInvoiceTest {

    /** The built-in A100 on-demand rate, 762.5 micro-USD a second. */
    private static final long OLD = 2_745_000;
    /** 1,000 micro-USD a second. */
    private static final long NEW = 3_600_000;
    /** 500 micro-USD a second. */
    private static final long NEWER = 1_800_000;
    private static final Instant JUNE_1 = Instant.parse("2025-06-01T00:00:00Z");
    private static final Sku A100 = Sku.wholeGpu(A100_SXM4_40GB);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("a price change in the middle of an interval splits it at the change",
                        change(ON_DEMAND, at(1800), NEW), ON_DEMAND, 1, List.of(iv(0, 3600)), List.of(
                                line(1800, OLD, 1_372_500, JUNE_1),
                                line(1800, NEW, 1_800_000, at(1800)))),
                Arguments.of("a price change exactly at an interval boundary splits nothing inside an interval",
                        change(ON_DEMAND, at(1800), NEW), ON_DEMAND, 1, List.of(iv(0, 1800), iv(3600, 5400)), List.of(
                                line(1800, OLD, 1_372_500, JUNE_1),
                                line(1800, NEW, 1_800_000, at(1800)))),
                Arguments.of("two price changes inside one allocation make three lines",
                        both(change(ON_DEMAND, at(1000), NEW), change(ON_DEMAND, at(2000), NEWER)), ON_DEMAND, 1,
                        List.of(iv(0, 3600)), List.of(
                                line(1000, OLD, 762_500, JUNE_1),
                                line(1000, NEW, 1_000_000, at(1000)),
                                line(1600, NEWER, 800_000, at(2000)))),
                Arguments.of("a price change before any usage in the month prices all of it, and says from when",
                        change(ON_DEMAND, at(-3600), NEW), ON_DEMAND, 1, List.of(iv(0, 3600)), List.of(
                                line(3600, NEW, 3_600_000, at(-3600)))),
                Arguments.of("a price change in an earlier month is simply the month's rate",
                        change(ON_DEMAND, Instant.parse("2025-05-20T00:00:00Z"), NEW), ON_DEMAND, 1,
                        List.of(iv(0, 3600)), List.of(line(3600, NEW, 3_600_000, null))),
                Arguments.of("a price change in a later month does not touch this month",
                        change(ON_DEMAND, Instant.parse("2025-07-01T00:00:00Z"), NEW), ON_DEMAND, 1,
                        List.of(iv(0, 3600)), List.of(line(3600, OLD, 2_745_000, null))),
                Arguments.of("the minimum is priced at the rate in force when the allocation started",
                        change(ON_DEMAND, at(10), NEW), ON_DEMAND, 1, List.of(iv(0, 30)), List.of(
                                line(60, OLD, 45_750, JUNE_1))),
                Arguments.of("after a change inside the first 60 s, seconds beyond the minimum bill at the new rate",
                        change(ON_DEMAND, at(30), NEW), ON_DEMAND, 1, List.of(iv(0, 100)), List.of(
                                line(60, OLD, 45_750, JUNE_1),
                                line(40, NEW, 40_000, at(30)))),
                Arguments.of("units multiply each rate's seconds",
                        change(ON_DEMAND, at(1800), NEW), ON_DEMAND, 8, List.of(iv(0, 3600)), List.of(
                                line(8 * 1800, OLD, 10_980_000, JUNE_1),
                                line(8 * 1800, NEW, 14_400_000, at(1800)))),
                Arguments.of("re-listing the same price changes nothing on the invoice",
                        change(ON_DEMAND, at(1800), OLD), ON_DEMAND, 1, List.of(iv(0, 3600)), List.of(
                                line(3600, OLD, 2_745_000, null))),
                Arguments.of("a price that returns to an earlier value is still a line per period",
                        both(change(ON_DEMAND, at(1000), NEW), change(ON_DEMAND, at(2000), OLD)), ON_DEMAND, 1,
                        List.of(iv(0, 3600)), List.of(
                                line(1000, OLD, 762_500, JUNE_1),
                                line(1000, NEW, 1_000_000, at(1000)),
                                line(1600, OLD, 1_220_000, at(2000)))),
                Arguments.of("an on-demand change moves a SKU billed at its on-demand fallback",
                        change(ON_DEMAND, at(1800), NEW), SPOT, 1, List.of(iv(0, 3600)), List.of(
                                line(1800, OLD, 1_372_500, JUNE_1),
                                line(1800, NEW, 1_800_000, at(1800)))),
                Arguments.of("a rounding half-even happens once per line",
                        change(ON_DEMAND, at(61), NEW), ON_DEMAND, 1, List.of(iv(0, 122)), List.of(
                                line(61, OLD, 46_512, JUNE_1),
                                line(61, NEW, 61_000, at(61)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void usage_is_priced_at_the_rate_in_force_at_each_second(String behaviour, UnaryOperator<PriceCatalog> changes,
            CapacityType type, int units, List<Interval> usage, List<Tuple> lines) {
        PriceCatalog catalog = changes.apply(PriceCatalog.awsDefaults());
        MeteredAllocation allocation = allocation(type, units, usage);

        Invoice invoice = new InvoiceCalculator(BillingPolicy.awsPerSecond(), catalog)
                .invoice("acme", JUNE, List.of(allocation));

        assertThat(invoice.lines()).extracting(InvoiceLine::seconds, InvoiceLine::rateMicrosPerHour,
                InvoiceLine::amountMicros, InvoiceLine::rateFrom).containsExactlyElementsOf(lines);
    }

    @ParameterizedTest(name = "{0}: the lines add up to the month's seconds and the total to the lines")
    @MethodSource("cases")
    void splitting_at_price_changes_neither_adds_nor_loses_a_second(String behaviour,
            UnaryOperator<PriceCatalog> changes, CapacityType type, int units, List<Interval> usage,
            List<Tuple> lines) {
        MeteredAllocation allocation = allocation(type, units, usage);
        Invoice invoice = new InvoiceCalculator(BillingPolicy.awsPerSecond(), changes.apply(PriceCatalog.awsDefaults()))
                .invoice("acme", JUNE, List.of(allocation));

        long seconds = invoice.lines().stream().mapToLong(InvoiceLine::seconds).sum();
        long amounts = invoice.lines().stream().mapToLong(InvoiceLine::amountMicros).sum();
        assertThat(seconds).isEqualTo(units * BillingPolicy.awsPerSecond().billedSecondsIn(allocation.usage(), JUNE));
        assertThat(invoice.totalMicros()).isEqualTo(amounts);
    }

    static Stream<Arguments> flagged() {
        return Stream.of(
                Arguments.of("an unknown SKU is held (rate 0, flagged) across a change of another model",
                        Sku.wholeGpu("MI300X"), ON_DEMAND, change(ON_DEMAND, at(1800), NEW),
                        List.of(tuple(3600L, 0L, "held: GPU model 'MI300X' is not in the price catalog", null))),
                Arguments.of("a spot price that starts mid-month replaces the flagged on-demand fallback from then",
                        A100, SPOT, change(SPOT, at(1800), 1_100_000),
                        List.of(tuple(1800L, OLD, "no SPOT price for A100-SXM4-40GB in force yet", JUNE_1),
                                tuple(1800L, 1_100_000L, null, at(1800)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("flagged")
    void a_fallback_price_stays_flagged_per_period(String behaviour, Sku sku, CapacityType type,
            UnaryOperator<PriceCatalog> changes, List<Tuple> lines) {
        MeteredAllocation allocation = new MeteredAllocation("alloc-1", "acme", "job-1", sku, 1, type,
                IntervalUnion.of(iv(0, 3600)));

        Invoice invoice = new InvoiceCalculator(BillingPolicy.awsPerSecond(), changes.apply(PriceCatalog.awsDefaults()))
                .invoice("acme", JUNE, List.of(allocation));

        assertThat(invoice.lines()).hasSameSizeAs(lines);
        for (int i = 0; i < lines.size(); i++) {
            Object[] expected = lines.get(i).toArray();
            InvoiceLine line = invoice.lines().get(i);
            assertThat(line.seconds()).isEqualTo(expected[0]);
            assertThat(line.rateMicrosPerHour()).isEqualTo(expected[1]);
            if (expected[2] == null) {
                assertThat(line.flag()).isNull();
            } else {
                assertThat(line.flag()).contains((String) expected[2]);
            }
            assertThat(line.rateFrom()).isEqualTo(expected[3]);
        }
    }

    private static MeteredAllocation allocation(CapacityType type, int units, List<Interval> usage) {
        return new MeteredAllocation("alloc-1", "acme", "job-1", A100, units, type, IntervalUnion.of(usage));
    }

    private static UnaryOperator<PriceCatalog> change(CapacityType type, Instant from, long microsPerGpuHour) {
        return catalog -> catalog.withPrice(A100_SXM4_40GB, type, from, microsPerGpuHour);
    }

    private static Tuple line(long seconds, long rate, long amount, Instant rateFrom) {
        return tuple(seconds, rate, amount, rateFrom);
    }

    private static UnaryOperator<PriceCatalog> both(UnaryOperator<PriceCatalog> first, UnaryOperator<PriceCatalog> then) {
        return catalog -> then.apply(first.apply(catalog));
    }
}
