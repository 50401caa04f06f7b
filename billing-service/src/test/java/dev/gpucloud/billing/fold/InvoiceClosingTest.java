package dev.gpucloud.billing.fold;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Invoices close a grace period after their month ends; corrections land on the next open one. */
class InvoiceClosingTest {

    private static final InvoiceClosing THREE_DAYS = new InvoiceClosing(Duration.ofDays(3));
    private static final YearMonth MAY = YearMonth.of(2025, 5);

    static Stream<Arguments> due() {
        return Stream.of(
                Arguments.of("during the month", "2025-05-20T00:00:00Z", false),
                Arguments.of("in the grace period", "2025-06-03T23:59:59Z", false),
                Arguments.of("at the end of the grace period", "2025-06-04T00:00:00Z", true),
                Arguments.of("long after", "2026-01-01T00:00:00Z", true));
    }

    @ParameterizedTest(name = "May is due {0}: {2}")
    @MethodSource("due")
    void may_closes_three_days_after_it_ends(String when, String now, boolean due) {
        assertThat(THREE_DAYS.isDue(MAY, Instant.parse(now))).isEqualTo(due);
    }

    @Test
    void the_last_due_month_follows_the_grace() {
        assertThat(THREE_DAYS.lastDueMonth(Instant.parse("2025-06-03T23:59:59Z"))).isEqualTo(YearMonth.of(2025, 4));
        assertThat(THREE_DAYS.lastDueMonth(Instant.parse("2025-06-04T00:00:00Z"))).isEqualTo(MAY);
        assertThat(new InvoiceClosing(Duration.ZERO).lastDueMonth(Instant.parse("2025-06-01T00:00:00Z")))
                .isEqualTo(MAY);
    }

    @Test
    void an_adjustment_goes_on_the_first_month_after_that_is_not_closed() {
        assertThat(InvoiceClosing.nextOpen(MAY, Set.of(MAY))).isEqualTo(YearMonth.of(2025, 6));
        assertThat(InvoiceClosing.nextOpen(MAY, Set.of(MAY, YearMonth.of(2025, 6), YearMonth.of(2025, 7))))
                .isEqualTo(YearMonth.of(2025, 8));
    }

    @Test
    void a_month_has_ended_at_midnight_utc_after_its_last_day() {
        assertThat(InvoiceClosing.hasEnded(MAY, Instant.parse("2025-05-31T23:59:59.999Z"))).isFalse();
        assertThat(InvoiceClosing.hasEnded(MAY, Instant.parse("2025-06-01T00:00:00Z"))).isTrue();
        assertThat(InvoiceClosing.hasEnded(YearMonth.of(2025, 7), Instant.parse("2025-06-15T00:00:00Z"))).isFalse();
    }

    static Stream<Arguments> manualMonths() {
        YearMonth june = YearMonth.of(2025, 6);
        YearMonth july = YearMonth.of(2025, 7);
        YearMonth august = YearMonth.of(2025, 8);
        return Stream.of(
                Arguments.of("a tenant with nothing billed: the current month", Set.of(), Set.of(), august, august),
                Arguments.of("the earliest month not closed", Set.of(MAY, june, july), Set.of(MAY), august, june),
                Arguments.of("every earlier month closed: the current month", Set.of(MAY, june), Set.of(MAY, june),
                        august, august),
                Arguments.of("a month with usage ahead of the clock is not chosen", Set.of(YearMonth.of(2025, 9)),
                        Set.of(), august, august),
                Arguments.of("a closed current month (a clock behind another instance's): the next one",
                        Set.of(august), Set.of(august), august, YearMonth.of(2025, 9)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("manualMonths")
    void a_manual_adjustment_without_a_month_goes_on_the_earliest_open_invoice(String behaviour,
            Set<YearMonth> active, Set<YearMonth> closed, YearMonth current, YearMonth expected) {
        assertThat(InvoiceClosing.earliestOpen(active, closed, current)).isEqualTo(expected);
    }

    @Test
    void a_negative_grace_is_refused() {
        assertThatThrownBy(() -> new InvoiceClosing(Duration.ofDays(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grace");
    }
}
