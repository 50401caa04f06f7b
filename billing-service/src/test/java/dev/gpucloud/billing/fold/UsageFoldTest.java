package dev.gpucloud.billing.fold;

import static dev.gpucloud.billing.fold.Usage.iv;
import static dev.gpucloud.billing.fold.Usage.mkEvent;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.UsageEvent;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class UsageFoldTest {

    private final UsageFold fold = new UsageFold();

    @Test
    void a_repeated_event_id_changes_nothing() {
        fold.apply("ev-1", mkEvent("alloc-1", "acme", iv(0, 40)));

        UsageFold.Applied repeat = fold.apply("ev-1", mkEvent("alloc-1", "acme", iv(40, 80)));

        assertThat(repeat.outcome()).isEqualTo(UsageFold.Outcome.REPEAT);
        assertThat(fold.allocation("alloc-1").orElseThrow().usage().total()).isEqualTo(Duration.ofSeconds(40));
    }

    @Test
    void the_same_interval_under_a_new_event_id_adds_nothing() {
        fold.apply("ev-1", mkEvent("alloc-1", "acme", iv(0, 40)));

        UsageFold.Applied again = fold.apply("ev-2", mkEvent("alloc-1", "acme", iv(0, 40)));

        assertThat(again.outcome()).isEqualTo(UsageFold.Outcome.APPLIED);
        assertThat(again.added()).isZero();
    }

    @Test
    void an_overlapping_report_adds_only_its_new_part() {
        fold.apply("ev-1", mkEvent("alloc-1", "acme", iv(0, 40)));

        UsageFold.Applied overlap = fold.apply("ev-2", mkEvent("alloc-1", "acme", iv(30, 70)));

        assertThat(overlap.added()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void a_report_naming_another_tenant_is_refused() {
        fold.apply("ev-1", mkEvent("alloc-1", "acme", iv(0, 40)));

        UsageFold.Applied refused = fold.apply("ev-2", mkEvent("alloc-1", "globex", iv(40, 80)));

        assertThat(refused.outcome()).isEqualTo(UsageFold.Outcome.REFUSED);
        assertThat(refused.reason()).contains("field 'tenant' was 'acme', now 'globex'");
        assertThat(fold.allocation("alloc-1").orElseThrow().usage().total()).isEqualTo(Duration.ofSeconds(40));
    }

    @Test
    void a_report_with_another_capacity_type_is_refused() {
        UsageEvent first = mkEvent("alloc-1", "acme", iv(0, 40));
        fold.apply("ev-1", first);
        UsageEvent spot = new UsageEvent(first.allocationId(), first.jobId(), first.tenant(), first.nodeId(),
                first.to(), first.to().plusSeconds(10), first.sku(), 1, CapacityType.SPOT, first.zone());

        assertThat(fold.apply("ev-2", spot).reason()).contains("capacityType");
    }
}
