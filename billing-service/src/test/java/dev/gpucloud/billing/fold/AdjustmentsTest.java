package dev.gpucloud.billing.fold;

import static dev.gpucloud.contracts.events.CapacityType.ON_DEMAND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.time.YearMonth;
import java.util.List;
import java.util.stream.Stream;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** What a closed month still owes: priced now, minus billed, minus adjusted so far, line by line. */
class AdjustmentsTest {

    private static final YearMonth MAY = YearMonth.of(2025, 5);
    private static final String HELD = "held: GPU model 'X1' is not in the price catalog";

    private static InvoiceLine a100(String job, long seconds) {
        return new InvoiceLine(job, "A100-SXM4-40GB", ON_DEMAND, seconds, 2_745_000,
                MicroUsd.forSeconds(seconds, 2_745_000), null);
    }

    private static AdjustmentLine adjusted(String job, long seconds) {
        return new AdjustmentLine(MAY, "earlier", job, "A100-SXM4-40GB", ON_DEMAND, seconds, 2_745_000,
                MicroUsd.forSeconds(seconds, 2_745_000), null, null);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("a month billed exactly owes nothing",
                        List.of(a100("j1", 3600)), List.of(a100("j1", 3600)), List.of(), List.of()),
                Arguments.of("late usage adds its seconds and amount",
                        List.of(a100("j1", 5400)), List.of(a100("j1", 3600)), List.of(),
                        List.of(tuple("j1", 1800L, 1_372_500L))),
                Arguments.of("a new job's late usage is a line of its own",
                        List.of(a100("j1", 3600), a100("j2", 60)), List.of(a100("j1", 3600)), List.of(),
                        List.of(tuple("j2", 60L, 45_750L))),
                Arguments.of("an adjustment already frozen is not billed twice",
                        List.of(a100("j1", 5400)), List.of(a100("j1", 3600)), List.of(adjusted("j1", 1800)),
                        List.of()),
                Arguments.of("only what arrived after the last adjustment is owed",
                        List.of(a100("j1", 7200)), List.of(a100("j1", 3600)), List.of(adjusted("j1", 1800)),
                        List.of(tuple("j1", 1800L, 1_372_500L))),
                Arguments.of("held usage priced since: the held seconds leave, the priced ones arrive",
                        List.of(new InvoiceLine("j1", "X1", ON_DEMAND, 3600, 1_000_000, 1_000_000, null)),
                        List.of(new InvoiceLine("j1", "X1", ON_DEMAND, 3600, 0, 0, HELD)), List.of(),
                        List.of(tuple("j1", -3600L, 0L), tuple("j1", 3600L, 1_000_000L))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void owed(String behaviour, List<InvoiceLine> now, List<InvoiceLine> billed, List<AdjustmentLine> adjusted,
            List<Tuple> expected) {
        List<AdjustmentLine> lines = Adjustments.between(MAY, "late usage", now, billed, adjusted);

        assertThat(lines).extracting(AdjustmentLine::jobId, AdjustmentLine::seconds, AdjustmentLine::amountMicros)
                .containsExactlyElementsOf(expected);
        assertThat(lines).allSatisfy(line -> {
            assertThat(line.forMonth()).isEqualTo(MAY);
            assertThat(line.reason()).isEqualTo("late usage");
        });
    }

    @Test
    void the_held_line_keeps_its_flag_in_the_adjustment() {
        List<AdjustmentLine> lines = Adjustments.between(MAY, "priced", List.of(),
                List.of(new InvoiceLine("j1", "X1", ON_DEMAND, 60, 0, 0, HELD)), List.of());

        assertThat(lines).singleElement().satisfies(line -> assertThat(line.flag()).isEqualTo(HELD));
    }

    @Test
    void an_adjustment_for_another_month_is_refused() {
        assertThatThrownBy(() -> Adjustments.between(YearMonth.of(2025, 6), "x", List.of(), List.of(),
                List.of(adjusted("j1", 60))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2025-05");
    }

    @Test
    void a_statement_totals_lines_and_adjustments() {
        InvoiceStatement statement = new InvoiceStatement("acme", YearMonth.of(2025, 6), null,
                List.of(a100("j1", 3600)), List.of(adjusted("j1", 1800)));

        assertThat(statement.totalMicros()).isEqualTo(2_745_000 + 1_372_500);
        assertThat(statement.totalUsd()).isEqualTo("4.12");
        assertThat(statement.status()).isEqualTo("OPEN");
    }
}
