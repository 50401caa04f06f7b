package dev.gpucloud.scheduler.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.scheduler.Fixtures;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What an agent says it runs against what the scheduler holds: adopt, hold and stop, or ask. */
class AllocationReconcilerTest {

    private static final long GRACE = 30_000;
    private static final long STALE = 60_000;

    private Fleet fleet;
    private AllocationReconciler reconciler;

    @BeforeEach
    void setUp() {
        fleet = new Fleet();
        fleet.upsert(Fixtures.mkHost("h1", "A100", 8), 0);
        reconciler = new AllocationReconciler(GRACE);
    }

    private static AllocationReport running(String id, int... gpus) {
        return new AllocationReport(id, "job-" + id, "acme", java.util.Arrays.stream(gpus).boxed().toList(), null, null,
                1000);
    }

    private AllocationReconciler.Plan at(long now) {
        return reconciler.reconcile(fleet, id -> true, now, STALE);
    }

    @Test
    void anAllocationBothSidesKnowIsAdopted() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        for (long t = 0; t <= 120_000; t += 5_000) {
            reconciler.report("h1", t, List.of(running("a1", 0)));
            assertThat(at(t).isEmpty()).isTrue();
        }
    }

    @Test
    void anUnknownAllocationHoldsItsGpusAtOnceSoNothingIsPlacedOnThem() {
        reconciler.report("h1", 1_000, List.of(running("orphan", 0, 1)));
        AllocationReconciler.Plan plan = at(1_000);
        assertThat(plan.hold()).extracting(Assignment::allocationId).containsExactly("orphan");
        assertThat(plan.stops()).isEmpty();
        plan.hold().forEach(fleet::reserve);
        assertThat(fleet.conflict(Assignment.whole("new", "j", "t", 0, "h1", List.of(1), 0, 0))).isNotNull();
        assertThat(reconciler.foreignHolds()).containsExactly("orphan");
    }

    @Test
    void anUnknownAllocationStillReportedAfterTheGraceIsStoppedOnceAGrace() {
        long stops = 0;
        for (long t = 0; t <= 95_000; t += 5_000) {
            reconciler.report("h1", t, List.of(running("orphan", 0)));
            AllocationReconciler.Plan plan = at(t);
            plan.hold().forEach(fleet::reserve);
            for (AllocationReconciler.Ask s : plan.stops()) {
                assertThat(s.unknown()).isTrue();
                assertThat(s.reason()).contains("not one this scheduler runs");
                assertThat(t).isGreaterThanOrEqualTo(GRACE);
                stops++;
            }
        }
        assertThat(stops).as("at 30 s, 60 s and 90 s").isEqualTo(3);
    }

    @Test
    void aStoppedUnknownAllocationGivesItsGpusBack() {
        reconciler.report("h1", 0, List.of(running("orphan", 0)));
        at(0).hold().forEach(fleet::reserve);
        reconciler.report("h1", 5_000, List.of());
        AllocationReconciler.Plan plan = at(5_000);
        assertThat(plan.release()).containsExactly("orphan");
        plan.release().forEach(fleet::unreserve);
        assertThat(fleet.conflict(Assignment.whole("new", "j", "t", 0, "h1", List.of(0), 0, 0))).isNull();
        assertThat(reconciler.foreignHolds()).isEmpty();
    }

    @Test
    void aHostThatWentQuietNoLongerKeepsItsForeignHolds() {
        reconciler.report("h1", 0, List.of(running("orphan", 0)));
        at(0).hold().forEach(fleet::reserve);
        assertThat(at(STALE + 1).release()).containsExactly("orphan");
    }

    @Test
    void anOwnAllocationMissingFromReportsIsAskedAboutAfterTheGraceNeverLostOutright() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        reconciler.report("h1", 0, List.of());
        assertThat(at(0).asks()).isEmpty();
        reconciler.report("h1", 29_000, List.of());
        assertThat(at(29_000).asks()).isEmpty();
        reconciler.report("h1", 30_000, List.of());
        AllocationReconciler.Plan plan = at(30_000);
        assertThat(plan.stops()).as("nothing of the scheduler's own is stopped for being missing").isEmpty();
        List<AllocationReconciler.Ask> stops = plan.statusQueries();
        assertThat(stops).hasSize(1);
        assertThat(stops.get(0).unknown()).isFalse();
        assertThat(stops.get(0).reason()).contains("has not reported allocation a1");
    }

    @Test
    void anAllocationThatReappearsIsNotAskedAbout() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        reconciler.report("h1", 0, List.of());
        at(0);
        reconciler.report("h1", 20_000, List.of(running("a1", 0)));
        at(20_000);
        reconciler.report("h1", 40_000, List.of());
        assertThat(at(40_000).asks()).as("missing again only since 40 s").isEmpty();
    }

    @Test
    void aReportedAllocationTheSchedulerHasNotSeenStartIsEvidenceOfItsStart() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        reconciler.report("h1", 0, List.of(running("a1", 0)));
        assertThat(reconciler.reconcile(fleet, id -> false, 0, STALE).running())
                .extracting(AllocationReport::allocationId).containsExactly("a1");
        assertThat(reconciler.reconcile(fleet, id -> true, 0, STALE).running()).as("already known started").isEmpty();
    }

    @Test
    void aReportFromJustBeforeAnAllocationEndedIsNoSignOfAnUnknownOne() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        reconciler.report("h1", 10_000, List.of(running("a1", 0)));
        at(10_000);
        fleet.unreserve("a1"); // its EXITED arrives before the host's next report
        reconciler.ended("a1", 11_000);
        AllocationReconciler.Plan plan = at(12_000);
        assertThat(plan.hold()).isEmpty();
        assertThat(reconciler.foreignHolds()).isEmpty();
        reconciler.report("h1", 15_000, List.of());
        assertThat(at(15_000).isEmpty()).isTrue();
    }

    @Test
    void anAllocationTheSchedulerEndedButTheHostStillRunsPastTheGraceIsHeldAndStopped() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        fleet.unreserve("a1"); // say the scheduler wrongly counted it lost
        reconciler.ended("a1", 0);
        reconciler.report("h1", GRACE - 1, List.of(running("a1", 0)));
        assertThat(at(GRACE - 1).hold()).isEmpty();
        reconciler.report("h1", GRACE, List.of(running("a1", 0)));
        assertThat(at(GRACE).hold()).extracting(Assignment::allocationId).containsExactly("a1");
        reconciler.report("h1", 2 * GRACE, List.of(running("a1", 0)));
        assertThat(at(2 * GRACE).stops()).extracting(AllocationReconciler.Ask::allocationId).containsExactly("a1");
    }

    @Test
    void anOlderReportDoesNotOverrideANewerOne() {
        reconciler.report("h1", 10_000, List.of());
        reconciler.report("h1", 5_000, List.of(running("orphan", 0)));
        assertThat(at(10_000).hold()).isEmpty();
    }

    @Test
    void aForeignAllocationOnAGpuTheSchedulerAlsoHoldsIsAConflictAndStillStopped() {
        fleet.reserve(Assignment.whole("mine", "job-mine", "acme", 0, "h1", List.of(0), 0, 0));
        reconciler.report("h1", 0, List.of(running("orphan", 0), running("mine", 0)));
        AllocationReconciler.Plan first = at(0);
        assertThat(first.hold()).isEmpty();
        assertThat(first.conflicts()).singleElement().asString().contains("orphan");
        reconciler.report("h1", GRACE, List.of(running("orphan", 0), running("mine", 0)));
        assertThat(at(GRACE).stops()).extracting(AllocationReconciler.Ask::allocationId).containsExactly("orphan");
    }

    @Test
    void anIdTheSchedulerHoldsOnAnotherHostIsNeverTakenAsForeign() {
        fleet.upsert(Fixtures.mkHost("h2", "A100", 8), 0);
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h2", List.of(3), 0, 0));
        reconciler.report("h1", 0, List.of(running("a1", 3)));
        AllocationReconciler.Plan plan = at(0);
        assertThat(plan.hold()).isEmpty();
        assertThat(reconciler.foreignHolds()).isEmpty();
        assertThat(fleet.assignment("a1").orElseThrow().nodeId()).isEqualTo("h2");
        assertThat(Set.copyOf(plan.conflicts())).hasSize(1);
    }

    @Test
    void aForgottenHostTakesItsReportsAndHoldsAlong() {
        reconciler.report("h1", 0, List.of(running("orphan", 0)));
        at(0).hold().forEach(fleet::reserve);
        fleet.remove("h1");
        reconciler.forgetHost("h1");
        assertThat(reconciler.foreignHolds()).isEmpty();
        assertThat(at(1_000).isEmpty()).isTrue();
    }

    @Test
    void aMigAllocationHoldsItsSlot() {
        AllocationReport mig = new AllocationReport("m1", "job-m1", "acme", List.of(2), "MIG-abc", "3g.40gb@4", 1000);
        Assignment hold = AllocationReconciler.holdOf("h1", mig);
        assertThat(hold.migProfile()).isEqualTo("3g.40gb");
        assertThat(hold.migStart()).isEqualTo(4);
        assertThat(AllocationReconciler.holdOf("h1",
                new AllocationReport("m2", "j", "t", List.of(2), "MIG-abc", null, 1000))).isNull();
        assertThat(AllocationReconciler.holdOf("h1",
                new AllocationReport("f1", "j", "t", List.of(1), null, null, 250)).milliGpu()).isEqualTo(250);
    }

    /**
     * The 1,000-host fault run of 2026-12-03 (seed 33322551121764): the scheduler lost a1 to its host's silence, the
     * host came back and ran a1's late START, and refused a2 on the same GPU. The refusal names a1: its GPU stays
     * held until a report newer than the refusal leaves a1 out, even though a1 ended in the scheduler's eyes and
     * the host's last report (from before it ran a1 again) did not list it.
     */
    @Test
    void aStartRefusedForABusyGpuHoldsItForTheHolderUntilTheHostSaysItIsFree() {
        reconciler.ended("a1", 10_000); // lost to silence
        reconciler.report("h1", 11_000, List.of()); // the host's last word before it ran a1's late START
        Assignment a2 = Assignment.whole("a2", "job-a", "acme", 0, "h1", List.of(0), 0, 0);

        List<Assignment> holds = reconciler.busy(fleet, a2, 12_000, List.of("a1"));
        holds.forEach(fleet::reserve);

        assertThat(holds).singleElement().satisfies(h -> {
            assertThat(h.allocationId()).isEqualTo("a1");
            assertThat(h.gpuIndices()).containsExactly(0);
        });
        assertThat(at(12_500).release()).as("a report older than the refusal gives nothing back").isEmpty();
        assertThat(fleet.conflict(Assignment.whole("a3", "job-a", "acme", 0, "h1", List.of(0), 0, 0))).isNotNull();

        reconciler.report("h1", 13_000, List.of(running("a1", 0))); // a1 runs: the end the scheduler knew is old news
        AllocationReconciler.Plan plan = at(13_000);
        assertThat(plan.release()).isEmpty();
        assertThat(plan.hold()).as("held already").isEmpty();

        reconciler.report("h1", 12_000 + GRACE, List.of(running("a1", 0)));
        assertThat(at(12_000 + GRACE).stops()).as("still there after the grace: stopped as unknown")
                .extracting(AllocationReconciler.Ask::allocationId).containsExactly("a1");

        reconciler.report("h1", 45_000, List.of());
        assertThat(at(45_000).release()).containsExactly("a1");
        assertThat(reconciler.foreignHolds()).isEmpty();
    }

    @Test
    void aRefusalNamingAnAllocationTheSchedulerHoldsTakesNoSecondHold() {
        fleet.reserve(Assignment.whole("a1", "job-a1", "acme", 0, "h1", List.of(0), 0, 0));
        Assignment a2 = Assignment.whole("a2", "job-a", "acme", 0, "h1", List.of(1), 0, 0);

        assertThat(reconciler.busy(fleet, a2, 1_000, List.of("a1"))).isEmpty();
        assertThat(reconciler.foreignHolds()).isEmpty();
    }

    @Test
    void aRefusalsHoldOnAHostThatReportsNothingEndsWhenTheRefusalIsStale() {
        Assignment a2 = Assignment.whole("a2", "job-a", "acme", 0, "h1", List.of(0), 0, 0);
        reconciler.busy(fleet, a2, 1_000, List.of("a1")).forEach(fleet::reserve);

        assertThat(at(1_000 + STALE).release()).isEmpty();
        assertThat(at(1_001 + STALE).release()).containsExactly("a1");
    }
}
