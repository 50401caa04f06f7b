package dev.gpucloud.billing.fold;

import static dev.gpucloud.billing.fold.Usage.JUNE;
import static dev.gpucloud.billing.fold.Usage.at;
import static dev.gpucloud.billing.fold.Usage.iv;
import static dev.gpucloud.contracts.events.CapacityType.ON_DEMAND;
import static dev.gpucloud.contracts.events.CapacityType.RESERVED;
import static dev.gpucloud.contracts.events.CapacityType.SPOT;
import static dev.gpucloud.contracts.events.GpuModels.A100_SXM4_40GB;
import static dev.gpucloud.contracts.events.GpuModels.H100_SXM5_80GB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.stream.Stream;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Reserved commitments on the invoice. Not a @QuarkusTest: the calculator is plain Java. */
class ReservedCommitmentTest {

    /** The built-in A100 on-demand rate, 762.5 micro-USD a second. */
    private static final long ON_DEMAND_RATE = 2_745_000;
    /** The committed rate, 500 micro-USD a second. */
    private static final long COMMITTED_RATE = 1_800_000;
    private static final Instant JUNE_1 = Instant.parse("2025-06-01T00:00:00Z");
    private static final String UNUSED = ReservedCommitment.UNUSED;
    private static final String A100 = A100_SXM4_40GB;
    /** One A100-hour a month in June 2025 for acme. */
    private static final ReservedCommitment ONE_HOUR = commitment("acme", A100, 1, JUNE, JUNE);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("usage within the commitment bills at its rate, the unused rest is billed too",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", A100, 1, ON_DEMAND, iv(0, 1800))),
                        List.of(line(UNUSED, RESERVED, 1800, COMMITTED_RATE, 900_000, null),
                                line("job-1", RESERVED, 1800, COMMITTED_RATE, 900_000, null))),
                Arguments.of("usage beyond the commitment is on-demand, on a separate line",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", A100, 1, ON_DEMAND, iv(0, 5400))),
                        List.of(line("job-1", ON_DEMAND, 1800, ON_DEMAND_RATE, 1_372_500, null),
                                line("job-1", RESERVED, 3600, COMMITTED_RATE, 1_800_000, null))),
                Arguments.of("the first hours in time fill the commitment, whichever job used them",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(
                                mk("a1", "job-a", A100, 1, ON_DEMAND, iv(1800, 5400)),
                                mk("a2", "job-b", A100, 1, ON_DEMAND, iv(0, 3600))),
                        List.of(line("job-a", ON_DEMAND, 1800, ON_DEMAND_RATE, 1_372_500, null),
                                line("job-a", RESERVED, 1800, COMMITTED_RATE, 900_000, null),
                                line("job-b", ON_DEMAND, 1800, ON_DEMAND_RATE, 1_372_500, null),
                                line("job-b", RESERVED, 1800, COMMITTED_RATE, 900_000, null))),
                Arguments.of("a reserved allocation beyond the commitment is on-demand",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", A100, 1, RESERVED, iv(0, 5400))),
                        List.of(line("job-1", ON_DEMAND, 1800, ON_DEMAND_RATE, 1_372_500, null),
                                line("job-1", RESERVED, 3600, COMMITTED_RATE, 1_800_000, null))),
                Arguments.of("spot usage does not draw on the commitment",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", A100, 1, SPOT, iv(0, 3600))),
                        List.of(line(UNUSED, RESERVED, 3600, COMMITTED_RATE, 1_800_000, null),
                                line("job-1", SPOT, 3600, ON_DEMAND_RATE, 2_745_000, null))),
                Arguments.of("another SKU does not draw on the commitment",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", H100_SXM5_80GB, 1, ON_DEMAND,
                                iv(0, 3600))),
                        List.of(line(UNUSED, RESERVED, 3600, COMMITTED_RATE, 1_800_000, null),
                                line("job-1", ON_DEMAND, 3600, 6_880_000, 6_880_000, null))),
                Arguments.of("a month outside the commitment is priced from the catalog alone",
                        PriceCatalog.awsDefaults(), commitment("acme", A100, 1, JUNE.plusMonths(1), JUNE.plusMonths(12)),
                        List.of(mk("a1", "job-1", A100, 1, ON_DEMAND, iv(0, 3600))),
                        List.of(line("job-1", ON_DEMAND, 3600, ON_DEMAND_RATE, 2_745_000, null))),
                Arguments.of("another tenant's commitment does not apply",
                        PriceCatalog.awsDefaults(), commitment("globex", A100, 1, JUNE, JUNE),
                        List.of(mk("a1", "job-1", A100, 1, ON_DEMAND, iv(0, 3600))),
                        List.of(line("job-1", ON_DEMAND, 3600, ON_DEMAND_RATE, 2_745_000, null))),
                Arguments.of("units count toward the commitment",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", A100, 2, ON_DEMAND, iv(0, 3600))),
                        List.of(line("job-1", ON_DEMAND, 3600, ON_DEMAND_RATE, 2_745_000, null),
                                line("job-1", RESERVED, 3600, COMMITTED_RATE, 1_800_000, null))),
                Arguments.of("the minimum counts toward the commitment",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(mk("a1", "job-1", A100, 1, ON_DEMAND, iv(0, 5))),
                        List.of(line(UNUSED, RESERVED, 3540, COMMITTED_RATE, 1_770_000, null),
                                line("job-1", RESERVED, 60, COMMITTED_RATE, 30_000, null))),
                Arguments.of("usage beyond the commitment follows an on-demand price change",
                        PriceCatalog.awsDefaults().withPrice(A100, ON_DEMAND, at(5400), 3_600_000), ONE_HOUR,
                        List.of(mk("a1", "job-1", A100, 1, ON_DEMAND, iv(0, 7200))),
                        List.of(line("job-1", ON_DEMAND, 1800, ON_DEMAND_RATE, 1_372_500, JUNE_1),
                                line("job-1", ON_DEMAND, 1800, 3_600_000, 1_800_000, at(5400)),
                                line("job-1", RESERVED, 3600, COMMITTED_RATE, 1_800_000, null))),
                Arguments.of("no usage at all still bills the whole commitment",
                        PriceCatalog.awsDefaults(), ONE_HOUR, List.of(),
                        List.of(line(UNUSED, RESERVED, 3600, COMMITTED_RATE, 1_800_000, null))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void committed_hours_first_then_on_demand(String behaviour, PriceCatalog catalog, ReservedCommitment commitment,
            List<MeteredAllocation> allocations, List<Tuple> lines) {
        Invoice invoice = new InvoiceCalculator(BillingPolicy.awsPerSecond(), catalog, List.of(commitment))
                .invoice("acme", JUNE, allocations);

        assertThat(invoice.lines()).extracting(InvoiceLine::jobId, InvoiceLine::capacityType, InvoiceLine::seconds,
                InvoiceLine::rateMicrosPerHour, InvoiceLine::amountMicros, InvoiceLine::rateFrom)
                .containsExactlyElementsOf(lines);
    }

    @ParameterizedTest(name = "{0}: every used second is billed once")
    @MethodSource("cases")
    void a_commitment_neither_adds_nor_loses_a_used_second(String behaviour, PriceCatalog catalog,
            ReservedCommitment commitment, List<MeteredAllocation> allocations, List<Tuple> lines) {
        Invoice invoice = new InvoiceCalculator(BillingPolicy.awsPerSecond(), catalog, List.of(commitment))
                .invoice("acme", JUNE, allocations);

        long used = allocations.stream()
                .mapToLong(a -> a.units() * BillingPolicy.awsPerSecond().billedSecondsIn(a.usage(), JUNE)).sum();
        assertThat(invoice.lines().stream().filter(line -> !line.jobId().equals(UNUSED))
                .mapToLong(InvoiceLine::seconds).sum()).isEqualTo(used);
    }

    @Test
    void overlapping_commitments_are_refused() {
        assertThatThrownBy(() -> new InvoiceCalculator(BillingPolicy.awsPerSecond(), PriceCatalog.awsDefaults(),
                List.of(ONE_HOUR, commitment("acme", A100, 5, YearMonth.of(2025, 1), JUNE))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overlap");
    }

    static Stream<Arguments> entries() {
        return Stream.of(
                Arguments.of("a range of months", "acme/A100-SXM4-40GB/2025-06..2025-12=100@1840000",
                        commitment("acme", A100, 100, JUNE, YearMonth.of(2025, 12), 1_840_000)),
                Arguments.of("a single month", " acme / A100-SXM4-40GB / 2025-06 = 1 @ 1800000 ",
                        commitment("acme", A100, 1, JUNE, JUNE, 1_800_000)),
                Arguments.of("a MIG SKU, whose code has a slash", "acme/H100-SXM5-80GB/mig-1g.10gb/2025-06=10@500000",
                        commitment("acme", "H100-SXM5-80GB/mig-1g.10gb", 10, JUNE, JUNE, 500_000)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("entries")
    void commitments_are_parsed(String behaviour, String entry, ReservedCommitment commitment) {
        assertThat(ReservedCommitment.parse("# ours, from the contract\n" + entry)).containsExactly(commitment);
    }

    static Stream<Arguments> badEntries() {
        return Stream.of(
                Arguments.of("no months", "acme/A100-SXM4-40GB=1@1", "is not TENANT/SKU/FIRST..LAST=HOURS@MICROS"),
                Arguments.of("no rate", "acme/A100-SXM4-40GB/2025-06=1", "is not TENANT/SKU/FIRST..LAST=HOURS@MICROS"),
                Arguments.of("a month that is not one", "acme/A100-SXM4-40GB/June=1@1", "months must be YYYY-MM"),
                Arguments.of("no hours", "acme/A100-SXM4-40GB/2025-06=0@1", "hours per month of a commitment must be >= 1"),
                Arguments.of("an end before the start", "acme/A100-SXM4-40GB/2025-06..2025-05=1@1", "ends (2025-05) before"));
    }

    @ParameterizedTest(name = "{0} is refused, quoting it")
    @MethodSource("badEntries")
    void bad_commitments_are_refused(String behaviour, String entry, String message) {
        assertThatThrownBy(() -> ReservedCommitment.parse(entry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message).hasMessageContaining(entry.strip());
    }

    private static ReservedCommitment commitment(String tenant, String sku, long hours, YearMonth first, YearMonth last) {
        return commitment(tenant, sku, hours, first, last, COMMITTED_RATE);
    }

    private static ReservedCommitment commitment(String tenant, String sku, long hours, YearMonth first, YearMonth last,
            long rate) {
        return new ReservedCommitment(tenant, sku, hours, rate, first, last);
    }

    private static MeteredAllocation mk(String id, String job, String model, int units, CapacityType type,
            Interval... usage) {
        return new MeteredAllocation(id, "acme", job, Sku.wholeGpu(model), units, type, IntervalUnion.of(usage));
    }

    private static Tuple line(String job, CapacityType type, long seconds, long rate, long amount, Instant rateFrom) {
        return tuple(job, type, seconds, rate, amount, rateFrom);
    }
}
