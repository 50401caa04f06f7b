package dev.gpucloud.scheduler.queue;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementFramework;
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
}
