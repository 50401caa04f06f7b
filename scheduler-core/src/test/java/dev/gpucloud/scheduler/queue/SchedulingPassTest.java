package dev.gpucloud.scheduler.queue;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SchedulingPassTest {

    private final PlacementFramework framework = new PlacementFramework(Profile.defaults());
    private final SchedulingPass pass = new SchedulingPass(framework, 86_400);
    private final JobQueue queue = new JobQueue();
    private final List<RunningJob> running = new ArrayList<>();

    private QueuedJob job(String id, String tenant, PriorityClass p, int gpus, long estimateSeconds) {
        PlacementRequest r = new PlacementRequest(id, tenant, 0, 1, gpus, null, 0, 0, 0, Set.of(), 0, false, false,
                null, 0, null, Set.of(), p);
        return new QueuedJob(id, tenant, p, queue.nextSeq(), r, estimateSeconds, NOW);
    }

    private void run(Fleet fleet, String id, String tenant, PriorityClass p, int gpus, long endsInSeconds,
            boolean preemptible) {
        QueuedJob j = job(id, tenant, p, gpus, endsInSeconds);
        var d = framework.place(fleet, j.request(), NOW);
        assertThat(d.isPlaced()).isTrue();
        running.add(new RunningJob(id, tenant, p, gpus * 1000L, NOW, NOW + endsInSeconds * 1000, NOW, preemptible,
                d.assignments().stream().map(Assignment::allocationId).toList()));
        queue.charge(tenant, gpus * 1000L, 0);
    }

    /** A running job holding GPUs 0..gpus-1 of one named host. */
    private void runOn(Fleet fleet, String host, String id, int gpus, long endsInSeconds) {
        Assignment a = Assignment.whole(id + "-a0-r0", id, "x", 0, host,
                java.util.stream.IntStream.range(0, gpus).boxed().toList(), 0, 0);
        fleet.reserve(a);
        running.add(new RunningJob(id, "x", PriorityClass.NORMAL, gpus * 1000L, NOW, NOW + endsInSeconds * 1000, NOW,
                false, List.of(a.allocationId())));
    }

    @Test
    void higherClassesGoFirstAndFifoWithinAClass() {
        queue.enqueue(job("low", "a", PriorityClass.LOW, 1, 0));
        queue.enqueue(job("n1", "a", PriorityClass.NORMAL, 1, 0));
        queue.enqueue(job("high", "a", PriorityClass.HIGH, 1, 0));
        queue.enqueue(job("n2", "a", PriorityClass.NORMAL, 1, 0));
        assertThat(queue.order()).extracting(QueuedJob::jobId).containsExactly("high", "n1", "n2", "low");
    }

    @Test
    void fairShareServesTheTenantWithTheSmallestDominantShare() {
        queue.setClusterCapacity(16_000, 100_000);
        queue.charge("big", 8000, 0);
        queue.enqueue(job("big-1", "big", PriorityClass.NORMAL, 4, 0));
        queue.enqueue(job("big-2", "big", PriorityClass.NORMAL, 4, 0));
        queue.enqueue(job("small-1", "small", PriorityClass.NORMAL, 4, 0));
        queue.enqueue(job("small-2", "small", PriorityClass.NORMAL, 4, 0));
        queue.enqueue(job("small-3", "small", PriorityClass.NORMAL, 4, 0));
        // small: 0, 4, 8 GPUs given vs big's 8: small, small, then tie at 8 (older head: big-1), ...
        assertThat(queue.order()).extracting(QueuedJob::jobId)
                .containsExactly("small-1", "small-2", "big-1", "small-3", "big-2");
    }

    @Test
    void hardQuotaRefusesAndSoftQuotaWaitsBehindOthers() {
        queue.setQuota("a", TenantQuota.gpus(4, 8));
        queue.charge("a", 4000, 0);
        assertThat(queue.refusal("a", 5000)).isEqualTo(
                "tenant a would exceed its hard GPU quota: 8 GPUs, 4 running or queued, this job asks 5");
        assertThat(queue.refusal("a", 4000)).isNull();
        queue.enqueue(job("a-1", "a", PriorityClass.NORMAL, 2, 0));
        queue.enqueue(job("b-1", "b", PriorityClass.NORMAL, 2, 0));
        assertThat(queue.order()).extracting(QueuedJob::jobId).containsExactly("b-1", "a-1");
        assertThat(queue.refusal("a", 3000)).isNotNull();
    }

    @Test
    void aJobWhosePlacementThrowsFailsAloneAndTheOthersArePlaced() {
        Plugins.Score poisoned = new Plugins.Score() {
            @Override
            public String name() {
                return "Poisoned";
            }

            @Override
            public int score(dev.gpucloud.scheduler.framework.CycleState state, PlacementRequest request,
                    dev.gpucloud.scheduler.cluster.NodeState node) {
                if (request.jobId().equals("poison")) {
                    throw new IllegalStateException("a bug this request triggers");
                }
                return 50;
            }
        };
        SchedulingPass guarded = new SchedulingPass(new PlacementFramework(Profile.builder("poisoned")
                .score(poisoned, 1).build()), 86_400);
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        queue.enqueue(job("before", "a", PriorityClass.NORMAL, 1, 0));
        queue.enqueue(job("poison", "a", PriorityClass.NORMAL, 1, 0));
        queue.enqueue(job("after", "a", PriorityClass.NORMAL, 1, 0));
        PassResult r = guarded.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.placed()).extracting(p -> p.job().jobId()).containsExactly("before", "after");
        assertThat(r.unresolvable()).containsOnlyKeys("poison");
        assertThat(r.unresolvable().get("poison")).isEqualTo(
                "placement failed: java.lang.IllegalStateException: a bug this request triggers");
    }

    @Test
    void backfillNeverDelaysTheHeadJob() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "running", "x", PriorityClass.NORMAL, 6, 3600, false); // 2 GPUs free, 6 free in 1 h
        queue.enqueue(job("head", "a", PriorityClass.NORMAL, 8, 3600));
        queue.enqueue(job("short", "b", PriorityClass.NORMAL, 1, 1800)); // ends before the head can start
        queue.enqueue(job("long", "c", PriorityClass.NORMAL, 1, 7200));  // would hold a GPU the head needs
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.reservedFor()).isEqualTo("head");
        assertThat(r.shadowMillis()).isEqualTo(NOW + 3_600_000);
        assertThat(r.placed()).extracting(p -> p.job().jobId()).containsExactly("short");
        assertThat(r.placed().get(0).backfilled()).isTrue();
        assertThat(r.waiting()).containsKeys("head", "long");
        assertThat(r.waiting().get("long")).startsWith("fits now, but would delay the reserved start of head");
        assertThat(r.waiting().get("head")).isEqualTo("1 host: 2 of 8 A100-SXM4-80GB free, need 8");
        assertThat(fleet.node("h").orElseThrow().wholeFree()).isEqualTo(1);
        assertThat(queue.get("long")).isPresent();
    }

    @Test
    void backfillMayUseWhatTheHeadWillNotNeed() {
        Fleet fleet = new Fleet();
        host("h1").add(fleet);
        host("h2").add(fleet);
        run(fleet, "r1", "x", PriorityClass.NORMAL, 8, 3600, false);
        run(fleet, "r2", "x", PriorityClass.NORMAL, 4, 3600, false);
        queue.enqueue(job("head", "a", PriorityClass.NORMAL, 8, 0));
        queue.enqueue(job("long", "c", PriorityClass.NORMAL, 4, 0)); // 4 free now + 12 freed later - 8 = 8 spare
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.placed()).extracting(p -> p.job().jobId()).containsExactly("long");
    }

    @Test
    void highPriorityPreemptsTheCheapestLowJobsOnly() {
        Fleet fleet = new Fleet();
        host("h1").add(fleet);
        host("h2").add(fleet);
        run(fleet, "low-old", "x", PriorityClass.LOW, 8, 3600, true);
        run(fleet, "normal", "x", PriorityClass.NORMAL, 4, 3600, false);
        run(fleet, "low-new", "x", PriorityClass.LOW, 4, 3600, true);
        queue.enqueue(job("urgent", "a", PriorityClass.HIGH, 4, 0));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.preemptions()).singleElement().satisfies(p -> {
            assertThat(p.preemptor().jobId()).isEqualTo("urgent");
            assertThat(p.victims()).extracting(RunningJob::jobId).containsExactly("low-new");
        });
        assertThat(r.waiting().get("urgent")).isEqualTo("preempting 1 lower-priority job(s), which checkpoint first");
        assertThat(fleet.assignments()).hasSize(3);
        PassResult again = pass.run(fleet, queue, running, Set.of("urgent"), NOW);
        assertThat(again.preemptions()).isEmpty();
        assertThat(again.waiting().get("urgent")).isEqualTo("waiting for preempted jobs to checkpoint and stop");
    }

    @Test
    void lowJobsNeverPreemptAndNothingToPreemptMeansWait() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "normal", "x", PriorityClass.NORMAL, 8, 3600, false);
        queue.enqueue(job("urgent", "a", PriorityClass.HIGH, 4, 0));
        queue.enqueue(job("low", "a", PriorityClass.LOW, 4, 0));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.preemptions()).isEmpty();
        assertThat(r.waiting()).containsOnlyKeys("urgent", "low");
    }

    @Test
    void aHeadThatNoRunningJobCanMakeRoomForDoesNotBlockOthers() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        run(fleet, "running", "x", PriorityClass.NORMAL, 4, 3600, false);
        PlacementRequest h100 = new PlacementRequest("h100", "a", 0, 1, 8, null, 0, 0, 0, Set.of("H100-SXM5-80GB"), 0,
                false, false, null, 0, null, Set.of(), PriorityClass.NORMAL);
        queue.enqueue(new QueuedJob("h100", "a", PriorityClass.NORMAL, queue.nextSeq(), h100, 0, NOW));
        queue.enqueue(job("small", "b", PriorityClass.NORMAL, 4, 0));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.reservedFor()).isEqualTo("h100");
        assertThat(r.shadowMillis()).isEqualTo(Long.MAX_VALUE);
        assertThat(r.placed()).extracting(p -> p.job().jobId()).containsExactly("small");
    }

    @Test
    void backfillOnGpusTheHeadCannotUseIsAlwaysSafe() {
        Fleet fleet = new Fleet();
        host("a100").add(fleet);
        run(fleet, "running", "x", PriorityClass.NORMAL, 4, 3600, false);
        host("a10g").model("A10G", 24_576).gpus(4).add(fleet);
        PlacementRequest wantsA100 = new PlacementRequest("head", "a", 0, 1, 8, null, 0, 0, 0,
                Set.of("A100-SXM4-80GB"), 0, false, false, null, 0, null, Set.of(), PriorityClass.NORMAL);
        queue.enqueue(new QueuedJob("head", "a", PriorityClass.NORMAL, queue.nextSeq(), wantsA100, 0, NOW));
        PlacementRequest wantsA10g = new PlacementRequest("a10g-job", "b", 0, 1, 4, null, 0, 0, 0, Set.of("A10G"), 0,
                false, false, null, 0, null, Set.of(), PriorityClass.NORMAL);
        queue.enqueue(new QueuedJob("a10g-job", "b", PriorityClass.NORMAL, queue.nextSeq(), wantsA10g, 0, NOW));
        queue.enqueue(job("any", "c", PriorityClass.NORMAL, 2, 0));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.reservedFor()).isEqualTo("head");
        assertThat(r.placed()).extracting(p -> p.job().jobId()).containsExactly("a10g-job");
        assertThat(r.waiting()).containsKey("any");
    }

    @Test
    void unresolvableJobsAreReportedAndDoNotBlock() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        PlacementRequest mig = new PlacementRequest("bad", "a", 0, 1, 0, "9g.1gb", 0, 0, 0, Set.of(), 0, false, false,
                null, 0, null, Set.of(), PriorityClass.NORMAL);
        queue.enqueue(new QueuedJob("bad", "a", PriorityClass.NORMAL, queue.nextSeq(), mig, 0, NOW));
        queue.enqueue(job("ok", "a", PriorityClass.NORMAL, 8, 0));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.unresolvable()).containsEntry("bad", "unknown MIG profile 9g.1gb");
        assertThat(r.placed()).extracting(p -> p.job().jobId()).containsExactly("ok");
    }

    /** One host per running job: h1, h2, ... each 8 A100, the job holding {@code gpus} until {@code endsIn} seconds. */
    private record Backfill(String name, int[] gpus, long[] endsIn, int headGpus, int jobGpus, long jobEstimate,
            String expectHost, long expectShadowSeconds) {
    }

    @Test
    void backfillKnowsWhichHostsTheHeadWillGetAtItsShadowTime() {
        List<Backfill> cases = List.of(
                // GPU counting saw 8 free GPUs now (4 + 4) and set the shadow to now: nothing could backfill
                new Backfill("fragmented free GPUs: a job ending before the head's whole host frees fits",
                        new int[] {4, 4}, new long[] {3600, 7200}, 8, 1, 1800, "h1", 3600),
                new Backfill("fragmented free GPUs: a long job goes to the host the head will not get",
                        new int[] {4, 4}, new long[] {3600, 36_000}, 8, 4, 0, "h2", 3600),
                // GPU counting saw 2 spare GPUs at the shadow time and let a 24 h job take them on h1, the
                // one host the head could use then: the head slipped to 10 h
                new Backfill("spare GPUs by count sit on the head's host: the long job goes elsewhere",
                        new int[] {6, 6}, new long[] {3600, 36_000}, 8, 2, 0, "h2", 3600),
                new Backfill("no other room: the long job waits",
                        new int[] {6}, new long[] {3600}, 8, 2, 0, null, 3600),
                new Backfill("a job ending before the shadow time may use the head's GPUs",
                        new int[] {6}, new long[] {3600}, 8, 2, 1800, "h1", 3600));
        for (Backfill c : cases) {
            running.clear();
            Fleet fleet = new Fleet();
            JobQueue q = new JobQueue();
            for (int i = 0; i < c.gpus().length; i++) {
                host("h" + (i + 1)).add(fleet);
                runOn(fleet, "h" + (i + 1), "run" + (i + 1), c.gpus()[i], c.endsIn()[i]);
            }
            q.enqueue(job("head", "a", PriorityClass.NORMAL, c.headGpus(), 3600));
            q.enqueue(job("job", "b", PriorityClass.NORMAL, c.jobGpus(), c.jobEstimate()));
            PassResult r = pass.run(fleet, q, running, Set.of(), NOW);
            assertThat(r.reservedFor()).as(c.name()).isEqualTo("head");
            assertThat(r.shadowMillis()).as(c.name()).isEqualTo(NOW + c.expectShadowSeconds() * 1000);
            assertThat(r.reservedPlan()).as(c.name()).isNotEmpty();
            if (c.expectHost() == null) {
                assertThat(r.placed()).as(c.name()).isEmpty();
                assertThat(r.waiting().get("job")).as(c.name()).startsWith("fits now, but would delay the reserved start");
            } else {
                assertThat(r.placed()).as(c.name()).singleElement().satisfies(p -> {
                    assertThat(p.backfilled()).isTrue();
                    assertThat(p.decision().assignments()).extracting(Assignment::nodeId).containsOnly(c.expectHost());
                });
            }
            // the promise backfill keeps: once the jobs due by the shadow time end, the head fits
            long shadow = r.shadowMillis();
            long jobEnds = NOW + (c.jobEstimate() > 0 ? c.jobEstimate() : 86_400) * 1000;
            for (RunningJob j : running) {
                if (j.expectedEndMillis() <= shadow) {
                    j.allocationIds().forEach(fleet::unreserve);
                }
            }
            if (jobEnds <= shadow) {
                r.placed().forEach(p -> p.decision().assignments().forEach(a -> fleet.unreserve(a.allocationId())));
            }
            assertThat(framework.explain(fleet, q.get("head").orElseThrow().request(), NOW).isPlaced())
                    .as(c.name() + ": the head fits at its shadow time").isTrue();
        }
    }

    @Test
    void aGangHeadReservesWholeHostsAndBackfillLeavesThemAlone() {
        Fleet fleet = new Fleet();
        for (int i = 1; i <= 3; i++) {
            host("h" + i).leaf("f1", "s1", "l1").add(fleet);
        }
        runOn(fleet, "h1", "r1", 4, 3600);   // h1: 4 free, all free in 1 h
        runOn(fleet, "h2", "r2", 8, 3600);   // h2: full, free in 1 h
        runOn(fleet, "h3", "r3", 4, 36_000); // h3: 4 free for 10 h
        PlacementRequest gang = PlacementRequest.whole("gang", 2, 8);
        queue.enqueue(new QueuedJob("gang", "a", PriorityClass.NORMAL, queue.nextSeq(), gang, 3600, NOW));
        queue.enqueue(job("long", "b", PriorityClass.NORMAL, 4, 0));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.shadowMillis()).isEqualTo(NOW + 3_600_000);
        assertThat(r.reservedPlan()).extracting(Assignment::nodeId).containsExactlyInAnyOrder("h1", "h2");
        // by GPU count, 8 free now (h1 + h3) and 16 at 1 h left room for the long job on either host
        assertThat(r.placed()).singleElement().satisfies(p ->
                assertThat(p.decision().assignments()).extracting(Assignment::nodeId).containsExactly("h3"));
    }

    @Test
    void theShadowTimeIsTheFirstEndAfterWhichTheHeadFitsAmongManyRunningJobs() {
        Fleet fleet = new Fleet();
        for (int i = 0; i < 12; i++) {
            host("h" + i).add(fleet);
            runOn(fleet, "h" + i, "r" + i, 8, 3600L * (12 - i)); // h11 frees first (1 h), h0 last (12 h)
        }
        PlacementRequest three = new PlacementRequest("head", "a", 0, 3, 8, null, 0, 0, 0, Set.of(), 0, false, false,
                null, 0, null, Set.of(), PriorityClass.NORMAL);
        queue.enqueue(new QueuedJob("head", "a", PriorityClass.NORMAL, queue.nextSeq(), three, 3600, NOW));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        assertThat(r.shadowMillis()).isEqualTo(NOW + 3 * 3_600_000);
        assertThat(r.reservedPlan()).extracting(Assignment::nodeId).containsExactlyInAnyOrder("h9", "h10", "h11");
        assertThat(fleet.assignments()).hasSize(12); // every running job is back where it was
        assertThat(fleet.node("h11").orElseThrow().wholeFree()).isZero();
    }

    @Test
    void theShadowTimeWaitsForAWholeHostWhenFreedGpusAreScatteredOverHosts() {
        Fleet fleet = new Fleet();
        for (int i = 1; i <= 9; i++) {
            host("h" + i).add(fleet);
            long firstHalf = i == 9 ? 50 : i;
            long secondHalf = i == 9 ? 50 : 100 + i;
            Assignment a = Assignment.whole("a" + i, "a" + i, "x", 0, "h" + i, List.of(0, 1, 2, 3), 0, 0);
            Assignment b = Assignment.whole("b" + i, "b" + i, "x", 0, "h" + i, List.of(4, 5, 6, 7), 0, 0);
            fleet.reserve(a);
            fleet.reserve(b);
            running.add(new RunningJob("a" + i, "x", PriorityClass.NORMAL, 4000, NOW, NOW + firstHalf * 3_600_000, NOW,
                    false, List.of("a" + i)));
            running.add(new RunningJob("b" + i, "x", PriorityClass.NORMAL, 4000, NOW, NOW + secondHalf * 3_600_000,
                    NOW, false, List.of("b" + i)));
        }
        queue.enqueue(job("head", "a", PriorityClass.NORMAL, 8, 3600));
        PassResult r = pass.run(fleet, queue, running, Set.of(), NOW);
        // by GPU count the head would fit at 2 h (4 + 4 GPUs free on h1 and h2); no host is whole before 50 h
        assertThat(r.shadowMillis()).isEqualTo(NOW + 50 * 3_600_000L);
        assertThat(r.reservedPlan()).extracting(Assignment::nodeId).containsExactly("h9");
        assertThat(fleet.assignments()).hasSize(18);
    }
}
