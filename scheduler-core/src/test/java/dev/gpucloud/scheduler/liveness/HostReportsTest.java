package dev.gpucloud.scheduler.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.scheduler.Fixtures;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What hosts said between two operations, taken in once. */
class HostReportsTest {

    private final Fleet fleet = new Fleet();
    private final AllocationReconciler reconciler = new AllocationReconciler(10_000);
    private final HostReports reports = new HostReports();

    HostReportsTest() {
        fleet.upsert(Fixtures.mkHost("n1", "A100", 8), 0);
    }

    @Test
    void theNewestWordOfAHostWinsWhateverOrderItCameIn() {
        reports.heard("n1", 5_000, null);
        reports.heard("n1", 3_000, null);

        assertThat(reports.waitingSince("n1")).isEqualTo(5_000);
        reports.takeInto(fleet, reconciler, 0);

        assertThat(fleet.node("n1").orElseThrow().lastHeardMillis()).isEqualTo(5_000);
        assertThat(reports.waitingSince("n1")).as("taken in").isNull();
    }

    @Test
    void whatAHostRunsGoesToTheReconciler() {
        reports.heard("n1", 5_000, List.of(new AllocationReport("x-a1-r0", "x", "t", List.of(2), null, null, 1000)));

        reports.takeInto(fleet, reconciler, 0);
        AllocationReconciler.Plan plan = reconciler.reconcile(fleet, id -> false, 5_000 + 10_001, 60_000);

        assertThat(plan.hold()).extracting(a -> a.allocationId()).containsExactly("x-a1-r0");
    }

    @Test
    void anUnknownHostIsKeptUntilItsInventoryComesOrItIsForgotten() {
        reports.heard("n2", 5_000, null);
        reports.heard("n3", 1_000, null);

        reports.takeInto(fleet, reconciler, 2_000);

        assertThat(reports.waitingSince("n2")).as("kept for its inventory").isEqualTo(5_000);
        assertThat(reports.waitingSince("n3")).as("older than the cut-off: forgotten").isNull();
        fleet.upsert(Fixtures.mkHost("n2", "A100", 8), 6_000);
        reports.takeInto(fleet, reconciler, 2_000);
        assertThat(fleet.node("n2").orElseThrow().lastHeardMillis()).isGreaterThanOrEqualTo(5_000);
    }
}
