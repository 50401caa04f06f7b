package dev.gpucloud.billing.fold;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.CapacityType;
import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What finance may book by hand, and how it counts on the invoice it is booked on. */
class ManualAdjustmentTest {

    private static final YearMonth JUNE = YearMonth.of(2025, 6);
    private static final Instant BOOKED = Instant.parse("2025-06-20T10:00:00Z");

    private static ManualAdjustment credit(long id, long micros) {
        return new ManualAdjustment(id, "acme", JUNE, micros, "SLA credit for the 2025-06-12 outage", "key-" + id,
                "fin", BOOKED);
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("an amount of 0", (Runnable) () -> ManualAdjustment.amount(0), "amountMicros"),
                Arguments.of("more than 1,000,000 USD", (Runnable) () -> ManualAdjustment.amount(1_000_000_000_001L),
                        "amountMicros"),
                Arguments.of("a credit of more than 1,000,000 USD",
                        (Runnable) () -> ManualAdjustment.amount(Long.MIN_VALUE), "amountMicros"),
                Arguments.of("no reason", (Runnable) () -> ManualAdjustment.reason(null), "reason"),
                Arguments.of("a blank reason", (Runnable) () -> ManualAdjustment.reason("   "), "reason"),
                Arguments.of("a reason of 501 characters", (Runnable) () -> ManualAdjustment.reason("x".repeat(501)),
                        "reason"),
                Arguments.of("a line break in the reason", (Runnable) () -> ManualAdjustment.reason("a\nb"), "reason"),
                Arguments.of("a NUL in the reason", (Runnable) () -> ManualAdjustment.reason("a\u0000b"), "reason"),
                Arguments.of("a right-to-left override in the reason",
                        (Runnable) () -> ManualAdjustment.reason("credit \u202e0001"), "reason"),
                Arguments.of("an unpaired surrogate in the reason",
                        (Runnable) () -> ManualAdjustment.reason("a\ud800b"), "reason"),
                Arguments.of("no key", (Runnable) () -> ManualAdjustment.idempotencyKey(null), "Idempotency-Key"),
                Arguments.of("a key with a space", (Runnable) () -> ManualAdjustment.idempotencyKey("a b"),
                        "Idempotency-Key"),
                Arguments.of("a key of 129 characters",
                        (Runnable) () -> ManualAdjustment.idempotencyKey("k".repeat(129)), "Idempotency-Key"));
    }

    @ParameterizedTest(name = "{0} is refused, naming {2}")
    @MethodSource("refused")
    void bad_input_is_refused_naming_the_field(String behaviour, Runnable check, String field) {
        assertThatThrownBy(check::run).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(field);
    }

    @Test
    void credits_debits_and_everyday_text_pass() {
        assertThat(ManualAdjustment.amount(-12_500_000)).isEqualTo(-12_500_000);
        assertThat(ManualAdjustment.amount(1_000_000_000_000L)).isEqualTo(1_000_000_000_000L);
        assertThat(ManualAdjustment.reason("Gutschrift für den Ausfall am 12.06. (SLA 99,9 %) 😀")).isNotBlank();
        assertThat(ManualAdjustment.idempotencyKey("3f1c2a9e-5b7d-4c1e-9f00-2a6b8d7e1c44")).hasSize(36);
        assertThat(credit(1, -12_500_000).amountUsd()).isEqualTo("-12.500000");
    }

    @Test
    void a_manual_adjustment_counts_once_in_the_total_beside_lines_and_corrections() {
        InvoiceStatement statement = new InvoiceStatement("acme", JUNE, null,
                List.of(new InvoiceLine("j1", "A100-SXM4-40GB", CapacityType.ON_DEMAND, 3600, 2_745_000, 2_745_000,
                        null)),
                List.of(new AdjustmentLine(YearMonth.of(2025, 5), "late", "j0", "A100-SXM4-40GB",
                        CapacityType.ON_DEMAND, 60, 2_745_000, 45_750, null, null)),
                List.of(credit(1, -1_000_000), credit(2, 250_000)));

        assertThat(statement.totalMicros()).isEqualTo(2_745_000 + 45_750 - 1_000_000 + 250_000);
        assertThat(statement.totalUsd()).isEqualTo("2.04");
    }

    @Test
    void a_statement_refuses_another_months_or_tenants_adjustment() {
        ManualAdjustment july = new ManualAdjustment(3, "acme", JUNE.plusMonths(1), -1, "x", "k", "fin", BOOKED);
        assertThatThrownBy(() -> new InvoiceStatement("acme", JUNE, null, List.of(), List.of(), List.of(july)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2025-07");
        ManualAdjustment globex = new ManualAdjustment(4, "globex", JUNE, -1, "x", "k", "fin", BOOKED);
        assertThatThrownBy(() -> new InvoiceStatement("acme", JUNE, null, List.of(), List.of(), List.of(globex)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("globex");
    }
}
