package dev.gpucloud.scheduler.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LasTest {

    /** Limits 100, 200, 400 GPU-s (four levels), 60 s of run before yielding, starving after 10 x run time, 1 h. */
    private final Las las = new Las(100, 2, 4, 60_000, 10, 3_600_000);

    static QueuedJob queued(String id, int gpus, double attained, long queuedSince, long seq) {
        PlacementRequest r = new PlacementRequest(id, "t", 0, 1, gpus, null, 0, 0, 0, Set.of(), 0, false, false,
                null, 0, null, Set.of(), PriorityClass.NORMAL);
        return new QueuedJob(id, "t", PriorityClass.NORMAL, seq, r, 0, 0, attained, queuedSince, true);
    }

    static RunningJob running(String id, int gpus, long startedAt, double attainedBefore, boolean yields) {
        return new RunningJob(id, "t", PriorityClass.NORMAL, gpus * 1000L, startedAt, Long.MAX_VALUE, startedAt, false,
                List.of(id + "-a"), attainedBefore, yields);
    }

    @Test
    void levelsCountTheLimitsPassed() {
        assertThat(las.level(0)).isZero();
        assertThat(las.level(99.9)).isZero();
        assertThat(las.level(100)).isEqualTo(1);
        assertThat(las.level(399)).isEqualTo(2);
        assertThat(las.level(400)).isEqualTo(3);
        assertThat(las.level(1e12)).isEqualTo(3); // the last level is unbounded
        assertThat(Las.OFF.level(1e12)).isZero();
    }

    @Test
    void aJobStarvesAfterTheLongerOfTheFloorAndItsRunTimesTheFactor() {
        // 2 GPUs x 900 s run = 1,800 GPU-s: it starves after max(1 h, 10 x 900 s = 2.5 h)
        QueuedJob j = queued("j", 2, 1800, 0, 1);
        assertThat(las.starving(j, 9_000_000 - 1)).isFalse();
        assertThat(las.starving(j, 9_000_000)).isTrue();
        assertThat(las.level(j, 9_000_000)).isEqualTo(-1);
        // a job that never ran starves after the floor
        assertThat(las.starving(queued("new", 8, 0, 0, 2), 3_600_000)).isTrue();
        assertThat(Las.OFF.starving(queued("new", 8, 0, 0, 2), Long.MAX_VALUE / 2)).isFalse();
    }

    @Test
    void onlyAMoreServedYieldingJobOfTheClassThatRanLongEnoughIsPreempted() {
        QueuedJob fresh = queued("fresh", 1, 0, 0, 1);
        long now = 1_000_000;
        // 1 GPU for 200 s: 200 GPU-s, level 2 > 0
        assertThat(las.mayPreempt(fresh, running("served", 1, now - 200_000, 0, true), now)).isTrue();
        assertThat(las.mayPreempt(fresh, running("no-checkpoint", 1, now - 200_000, 0, false), now)).isFalse();
        // earlier attempts count: 150 before + 30 s now = 180 GPU-s, but it ran only 30 s of its 60 s minimum
        assertThat(las.mayPreempt(fresh, running("just-resumed", 1, now - 30_000, 150, true), now)).isFalse();
        // as served as the queued job: no
        QueuedJob served = queued("served-q", 1, 250, now, 2);
        assertThat(las.mayPreempt(served, running("peer", 1, now - 100_000, 150, true), now)).isFalse();
        assertThat(las.mayPreempt(served, running("more", 1, now - 100_000, 350, true), now)).isTrue();
        // another class: no
        RunningJob high = new RunningJob("high", "t", PriorityClass.HIGH, 1000, 0, Long.MAX_VALUE, 0, false,
                List.of("h-a"), 1e6, true);
        assertThat(las.mayPreempt(fresh, high, now)).isFalse();
        assertThat(Las.OFF.mayPreempt(fresh, running("served", 1, now - 200_000, 0, true), now)).isFalse();
    }

    @Test
    void theNextLimitIsWhenTheServiceReachesItButNotBeforeTheMinimumRun() {
        // 2 GPUs from t=-60 s with 10 GPU-s before: at t=10 s it has 150, reaches 200 at t=35 s
        assertThat(las.nextLevelAt(running("r", 2, -60_000, 10, true), 10_000)).isEqualTo(35_000);
        // 4 GPUs from t=0: reaches 100 at 25 s, but may not yield before 60 s
        assertThat(las.nextLevelAt(running("r", 4, 0, 0, true), 0)).isEqualTo(60_000);
        assertThat(las.nextLevelAt(running("r", 1, 0, 500, true), 0)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void badSettingsAreRefusedWithThemInTheMessage() {
        assertThatThrownBy(() -> new Las(0, 2, 4, 0, 1, 0)).hasMessageContaining("first limit > 0")
                .hasMessageContaining("0.0, 2.0, 4");
        assertThatThrownBy(() -> new Las(100, 1, 4, 0, 1, 0)).hasMessageContaining("factor > 1");
        assertThatThrownBy(() -> new Las(100, 2, 4, -1, 1, 0)).hasMessageContaining("-1");
    }

    @Test
    void theQueueOrdersATenantsJobsByLevelThenFewerGpusWithTheStarvingFirst() {
        JobQueue queue = new JobQueue();
        queue.setLas(las);
        long now = 1_000_000;
        queue.enqueue(queued("served-1gpu", 1, 150, now, 1)); // level 1
        queue.enqueue(queued("new-8gpu", 8, 0, now, 2)); // level 0
        queue.enqueue(queued("new-1gpu", 1, 0, now, 3)); // level 0, fewer GPUs
        queue.enqueue(queued("new-2gpu-b", 2, 0, now, 5));
        queue.enqueue(queued("new-2gpu-a", 2, 0, now, 4)); // same level and GPUs: place in line
        queue.enqueue(queued("long-waiting", 4, 1000, now - 4_000_000, 6)); // ran 250 s; waited past 1 h
        assertThat(queue.order(now)).extracting(QueuedJob::jobId).containsExactly("long-waiting", "new-1gpu",
                "new-2gpu-a", "new-2gpu-b", "new-8gpu", "served-1gpu");
        queue.setLas(Las.OFF);
        assertThat(queue.order(now)).extracting(QueuedJob::jobId).containsExactly("served-1gpu", "new-8gpu",
                "new-1gpu", "new-2gpu-a", "new-2gpu-b", "long-waiting");
    }
}
