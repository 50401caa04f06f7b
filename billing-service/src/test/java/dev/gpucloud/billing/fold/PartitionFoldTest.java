package dev.gpucloud.billing.fold;

import static dev.gpucloud.billing.fold.Usage.iv;
import static dev.gpucloud.billing.fold.Usage.mkEvent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.billing.fold.PartitionFold.Admission;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PartitionFoldTest {

    private final PartitionFold fold = new PartitionFold("usage.events", 0, 100);

    @Test
    void records_below_the_stored_offset_are_skipped_as_redeliveries() {
        assertThat(fold.admit(0)).isEqualTo(Admission.BELOW);
        assertThat(fold.admit(99)).isEqualTo(Admission.BELOW);
        assertThat(fold.admit(100)).isEqualTo(Admission.FOLD);
        assertThat(fold.admit(100)).as("the same record again").isEqualTo(Admission.BELOW);
        assertThat(fold.admit(101)).isEqualTo(Admission.FOLD);
        assertThat(fold.position()).isEqualTo(102);
        assertThat(fold.stored()).isEqualTo(100);
    }

    @Test
    void a_first_record_above_the_start_is_a_leftover_of_an_older_poll_and_is_skipped() {
        assertThat(fold.admit(250)).isEqualTo(Admission.GAP);
        assertThat(fold.admit(251)).isEqualTo(Admission.GAP);
        assertThat(fold.position()).as("nothing folded").isEqualTo(100);
        assertThat(fold.hasPending()).isFalse();
        assertThat(fold.admit(100)).isEqualTo(Admission.FOLD);
        assertThat(fold.admit(105)).as("offsets may skip once started (compacted or aborted records)")
                .isEqualTo(Admission.FOLD);
    }

    @Test
    void a_fold_may_start_above_its_stored_offset_when_retention_deleted_records() {
        PartitionFold late = new PartitionFold("usage.events", 1, 10, 40);
        assertThat(late.admit(39)).isEqualTo(Admission.BELOW);
        assertThat(late.admit(40)).isEqualTo(Admission.FOLD);
        assertThat(late.snapshot().stored()).isEqualTo(10);
        assertThat(late.snapshot().position()).isEqualTo(41);
        assertThatThrownBy(() -> new PartitionFold("usage.events", 1, 10, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_fold_of_a_recreated_log_starts_below_its_stored_offset_and_moves_it_down() {
        // the stored offset (142) was written against another log; this one ends below it, so it is read whole
        PartitionFold recreated = new PartitionFold("usage.events", 0, 142, 0);
        assertThat(recreated.admit(0)).isEqualTo(Admission.FOLD);
        assertThat(recreated.fold("e1", mkEvent("a-1", "acme", iv(0, 40)))).isEmpty();
        PartitionFold.Snapshot snapshot = recreated.snapshot();
        assertThat(snapshot.stored()).as("the fence expects what the database holds").isEqualTo(142);
        assertThat(snapshot.position()).isEqualTo(1);
        recreated.committed(snapshot);
        assertThat(recreated.stored()).isEqualTo(1);
    }

    @Test
    void the_snapshot_holds_each_allocations_new_usage_and_the_offset_and_commits_clean() {
        fold.admit(100);
        assertThat(fold.fold("e1", mkEvent("a-1", "acme", iv(0, 40)))).isEmpty();
        fold.admit(101);
        assertThat(fold.fold("e2", mkEvent("a-1", "acme", iv(30, 70)))).isEmpty();
        fold.admit(102);
        assertThat(fold.fold("e3", mkEvent("a-2", "acme", iv(0, 10)))).isEmpty();

        PartitionFold.Snapshot snapshot = fold.snapshot();

        assertThat(snapshot.stored()).isEqualTo(100);
        assertThat(snapshot.position()).isEqualTo(103);
        assertThat(snapshot.events()).isEqualTo(3);
        assertThat(snapshot.allocations()).hasSize(2);
        PartitionFold.Pending a1 = snapshot.allocations().stream()
                .filter(p -> p.dimensions().allocationId().equals("a-1")).findFirst().orElseThrow();
        assertThat(a1.added().total()).isEqualTo(Duration.ofSeconds(70));
        assertThat(a1.isNew()).isTrue();
        assertThat(a1.firstEventId()).isEqualTo("e1");
        assertThat(a1.nodeId()).isEqualTo("node-1");

        fold.committed(snapshot);
        assertThat(fold.stored()).isEqualTo(103);
        assertThat(fold.hasPending()).isFalse();
        assertThat(fold.snapshot().allocations()).isEmpty();
        assertThat(fold.unknown(List.of("a-1", "a-2", "a-3"))).containsExactly("a-3");
    }

    @Test
    void usage_folded_during_a_snapshot_stays_pending() {
        fold.admit(100);
        fold.fold("e1", mkEvent("a-1", "acme", iv(0, 40)));
        PartitionFold.Snapshot snapshot = fold.snapshot();
        fold.admit(101);
        fold.fold("e2", mkEvent("a-1", "acme", iv(40, 50)));

        fold.committed(snapshot);

        assertThat(fold.stored()).isEqualTo(101);
        assertThat(fold.hasPending()).isTrue();
        PartitionFold.Pending next = fold.snapshot().allocations().get(0);
        assertThat(next.isNew()).as("written by the first snapshot").isFalse();
        assertThat(next.added().total()).as("rewritten whole: idempotent in the store").isEqualTo(Duration.ofSeconds(50));
    }

    @Test
    void a_report_that_contradicts_the_stored_first_report_is_refused_and_changes_nothing() {
        fold.know(new MeteredAllocation("a-1", "acme", "job-1", mkEvent("a-1", "acme", iv(0, 1)).sku(), 1,
                dev.gpucloud.contracts.events.CapacityType.ON_DEMAND, IntervalUnion.of(iv(0, 500))));
        fold.admit(100);

        assertThat(fold.fold("e1", mkEvent("a-1", "other", iv(0, 40))))
                .hasValueSatisfying(reason -> assertThat(reason).contains("conflicts with its first report")
                        .contains("field 'tenant'"));
        assertThat(fold.snapshot().allocations()).isEmpty();
        assertThat(fold.hasPending()).as("the offset still moves past the refused record").isTrue();
        assertThat(fold.fold("e2", mkEvent("a-1", "acme", iv(0, 40)))).isEmpty();
        assertThat(fold.snapshot().allocations().get(0).isNew()).as("known from the store").isFalse();
    }

    @Test
    void a_snapshot_that_does_not_continue_the_stored_offset_is_rejected() {
        fold.admit(100);
        PartitionFold other = new PartitionFold("usage.events", 0, 50);
        other.admit(50);
        assertThatThrownBy(() -> fold.committed(other.snapshot())).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void clean_allocations_are_forgotten_above_the_limit() {
        for (int i = 0; i < 5; i++) {
            fold.admit(100 + i);
            fold.fold("e" + i, mkEvent("a-" + i, "acme", iv(0, 10)));
        }
        fold.committed(fold.snapshot());
        fold.admit(105);
        fold.fold("e5", mkEvent("a-5", "acme", iv(0, 10)));

        fold.trim(3);

        assertThat(fold.known()).as("only the dirty one kept").isEqualTo(1);
    }
}
