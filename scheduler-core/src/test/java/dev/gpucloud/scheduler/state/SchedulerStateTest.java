package dev.gpucloud.scheduler.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.TestFleet;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.queue.QueuedJob;
import dev.gpucloud.scheduler.queue.RunningJob;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord.Held;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord.Released;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord.Ended;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord.Placed;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord.Queued;
import dev.gpucloud.scheduler.state.SchedulerState.Stop;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class SchedulerStateTest {

    private static final long NOW = TestFleet.NOW;

    private static SchedulerState fresh() {
        return new SchedulerState(TestFleet.host("h1").gpus(8).add(new Fleet()), new JobQueue());
    }

    private static Queued queued(String jobId, String tenant, long seq, int attempt) {
        PlacementRequest r = new PlacementRequest(jobId, tenant, attempt, 1, 1, null, 0, 0, 0, Set.of(), 0, false,
                false, null, 0, null, Set.of(), PriorityClass.NORMAL);
        return new Queued(new QueuedJob(jobId, tenant, PriorityClass.NORMAL, seq, r, 0, NOW));
    }

    private static Placed placed(String jobId, String tenant, long milli, long lastCheckpoint, Stop stop) {
        return new Placed(new RunningJob(jobId, tenant, PriorityClass.LOW, milli, NOW, NOW + 60_000, lastCheckpoint,
                true, List.of(jobId + "-r0")), stop);
    }

    private static Held held(int gpu, boolean started) {
        return new Held(Assignment.whole("a" + gpu, "j" + gpu, "t", 0, "h1", List.of(gpu), 0, 0), started);
    }

    private static List<String> order(SchedulerState s) {
        return s.queue().order().stream().map(QueuedJob::jobId).toList();
    }

    @Test
    void a_requeued_job_keeps_its_place_in_line_with_its_new_attempt() {
        SchedulerState s = fresh();
        s.replay(queued("first", "t", 10, 1));
        s.replay(queued("second", "t", 20, 1));
        s.replay(placed("first", "t", 1000, NOW, null));
        assertThat(order(s)).containsExactly("second");

        s.replay(queued("first", "t", 10, 2)); // lost its worker: back in line, ahead of the later job

        assertThat(order(s)).containsExactly("first", "second");
        assertThat(s.queue().get("first")).get().extracting(q -> q.request().attempt()).isEqualTo(2);
        assertThat(s.running()).isEmpty();
        assertThat(s.queue().runningMilli("t")).isZero();
    }

    @Test
    void a_placed_job_charges_its_tenant_once_however_often_it_is_replayed() {
        SchedulerState s = fresh();
        s.replay(queued("j", "t", 1, 1));
        s.replay(placed("j", "t", 2000, NOW, null));
        s.replay(placed("j", "t", 2000, NOW + 5000, null)); // RUNNING now, and a checkpoint saved

        assertThat(s.queue().runningMilli("t")).isEqualTo(2000);
        assertThat(s.runningJob("j")).get().extracting(RunningJob::lastCheckpointMillis).isEqualTo(NOW + 5000);

        s.replay(new Ended("j"));
        assertThat(s.queue().runningMilli("t")).isZero();
        assertThat(s.running()).isEmpty();
        assertThat(s.queue().size()).isZero();
    }

    @Test
    void a_victims_stop_names_its_preemptor_until_the_victim_is_requeued() {
        SchedulerState s = fresh();
        s.replay(queued("high", "t", 5, 1));
        s.replay(placed("v1", "t", 1000, NOW, new Stop("preempted by high", NOW + 60_000, "high")));
        s.replay(placed("v2", "t", 1000, NOW, new Stop("preempted by high", NOW + 30_000, "high")));
        assertThat(s.preempting()).containsExactly("high");
        assertThat(s.overdue(NOW + 30_000)).containsExactly("v2");
        assertThat(s.overdue(NOW + 60_000)).containsExactly("v1", "v2");

        s.replay(queued("v2", "t", 7, 2));
        assertThat(s.preempting()).containsExactly("high"); // v1 still checkpoints for it

        s.replay(queued("v1", "t", 6, 2));
        assertThat(s.preempting()).isEmpty();
        assertThat(s.stop("v1")).isEmpty();
        assertThat(order(s)).containsExactly("high", "v1", "v2");
    }

    @Test
    void an_allocation_holds_its_gpus_until_its_record_says_released() {
        SchedulerState s = fresh();
        s.replay(held(3, false));
        assertThat(s.fleet().assignment("a3")).isPresent();
        assertThat(s.started("a3")).isFalse();

        s.replay(held(3, true));
        assertThat(s.started("a3")).isTrue();

        s.replay(new Released("a3"));
        s.replay(new Released("a3")); // a repeat changes nothing
        assertThat(s.fleet().assignment("a3")).isEmpty();
        assertThat(s.started("a3")).isFalse();
        assertThat(s.fleet().assignments()).isEmpty();
    }

    @Test
    void a_row_that_cannot_be_held_is_left_out_and_the_rest_go_on() {
        SchedulerState s = fresh();
        s.replay(held(3, true));
        Held clash = new Held(Assignment.whole("other", "jx", "t", 0, "h1", List.of(3), 0, 0), true);
        Held gone = new Held(Assignment.whole("gone", "jy", "t", 0, "h1", List.of(12), 0, 0), true);

        assertThat(s.replay(clash)).as("GPU 3 is held already").isNotNull();
        assertThat(s.replay(gone)).as("the host has 8 GPUs").isNotNull();
        assertThat(s.replay(held(4, false))).isNull();

        assertThat(s.fleet().assignment("other")).isEmpty();
        assertThat(s.fleet().assignment("gone")).isEmpty();
        assertThat(s.fleet().assignment("a3")).isPresent();
        assertThat(s.fleet().assignment("a4")).isPresent();
        assertThat(s.started("other")).isFalse();
    }

    /**
     * The property a restart rests on: for any history of records, replaying only the last record of each job
     * and each allocation, in any order, into an empty state gives what replaying the whole history gave.
     */
    @Test
    void replaying_the_last_record_of_each_gives_what_the_whole_history_gave() {
        for (long seed = 0; seed < 500; seed++) {
            Random random = new Random(seed);
            List<Object> history = history(random);
            SchedulerState live = fresh();
            Map<String, Object> last = new LinkedHashMap<>();
            for (Object record : history) {
                replay(live, record);
                String key = record instanceof JobRecord j ? "job " + j.jobId()
                        : "alloc " + ((AllocationRecord) record).allocationId();
                last.remove(key);
                last.put(key, record);
            }
            List<Object> restore = new ArrayList<>(last.values());
            Collections.shuffle(restore, random);
            SchedulerState restored = fresh();
            restore.forEach(record -> replay(restored, record));

            assertThat(view(restored)).as("seed %d (%d records)", seed, history.size()).isEqualTo(view(live));
        }
    }

    private static List<Object> history(Random random) {
        List<Object> records = new ArrayList<>();
        String[] tenants = {"t0", "t1"};
        for (int i = 0; i < 40; i++) {
            if (random.nextInt(3) == 0) {
                int gpu = random.nextInt(8);
                records.add(random.nextInt(3) == 0 ? new Released("a" + gpu) : held(gpu, random.nextBoolean()));
                continue;
            }
            int job = random.nextInt(6);
            String id = "j" + job;
            String tenant = tenants[job % 2];
            switch (random.nextInt(4)) {
                case 0 -> records.add(queued(id, tenant, 100 + job, 1 + random.nextInt(3)));
                case 1 -> records.add(new Ended(id));
                default -> records.add(placed(id, tenant, 1000L * (1 + random.nextInt(4)), NOW + random.nextInt(9),
                        random.nextBoolean() ? null : new Stop("preempted", NOW + random.nextInt(5) * 1000L,
                                random.nextBoolean() ? null : "j" + random.nextInt(6))));
            }
        }
        return records;
    }

    private static void replay(SchedulerState s, Object record) {
        if (record instanceof JobRecord j) {
            s.replay(j);
        } else {
            s.replay((AllocationRecord) record);
        }
    }

    /** Everything a pass or a sweep reads from the state. */
    private static Map<String, Object> view(SchedulerState s) {
        Map<String, Object> v = new TreeMap<>();
        v.put("queue order", order(s));
        v.put("queue entries", s.queue().jobs().stream().map(QueuedJob::toString).sorted().toList());
        v.put("running", s.running().stream().map(RunningJob::toString).sorted().toList());
        v.put("charged", List.of(s.queue().runningMilli("t0"), s.queue().runningMilli("t1")));
        v.put("preempting", new java.util.TreeSet<>(s.preempting()));
        v.put("overdue", s.overdue(NOW + 2000));
        List<String> stops = new ArrayList<>();
        List<String> held = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            s.stop("j" + i).ifPresent(stop -> stops.add(stop.toString()));
            int gpu = i;
            s.fleet().assignment("a" + i).ifPresent(a -> held.add(a + " started=" + s.started("a" + gpu)));
        }
        v.put("stops", stops);
        v.put("held", held);
        v.put("free GPUs", s.fleet().node("h1").orElseThrow().wholeFree());
        return v;
    }

    @Test
    void placed_jobs_past_their_time_limit_are_found_until_a_stop_for_it_is_asked() {
        SchedulerState s = fresh();
        Placed p = placed("over", "t", 1000, NOW, null);
        s.replay(new Placed(p.job(), null, NOW - 1));
        s.replay(new Placed(placed("under", "t", 1000, NOW, null).job(), null, NOW + 60_000));
        s.replay(new Placed(placed("preempted", "t", 1000, NOW, null).job(),
                new Stop("preempted by high", NOW + 60_000, "high"), NOW));
        s.replay(placed("unlimited", "t", 1000, NOW, null));
        assertThat(s.pastTimeLimit(NOW)).containsExactly("over", "preempted");
        s.replay(new Placed(p.job(), Stop.ending("time limit", NOW + 60_000, null), NOW - 1));
        assertThat(s.pastTimeLimit(NOW)).containsExactly("preempted");
        s.replay(new Ended("preempted"));
        assertThat(s.pastTimeLimit(NOW)).isEmpty();
    }
}
