package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.e2e.SchedulerKillIT.Alloc;
import dev.gpucloud.e2e.SchedulerKillIT.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kill -9 test's checks catch what they are meant to catch, on rows made up for the purpose. */
class KillTestInvariantsTest {

    static Alloc alloc(String id, String job, int attempt, int rank, String node, String gpus) {
        return new Alloc(id, job, attempt, rank, node, List.of(gpus.split(",")), "RUNNING", true);
    }

    static Row job(String id, String state, int attempt) {
        return new Row(id, "r-" + id, state, attempt, "");
    }

    @Test
    void a_clean_state_has_no_violation() {
        List<Alloc> active = List.of(alloc("a1", "j1", 1, 0, "n0", "0,1"), alloc("a2", "j2", 2, 0, "n0", "2"),
                alloc("a3", "j2", 2, 1, "n1", "2"));
        Map<String, Row> jobs = Map.of("j1", job("j1", "RUNNING", 1), "j2", job("j2", "SCHEDULED", 2),
                "j3", job("j3", "SUCCEEDED", 1));
        List<String> violations = new ArrayList<>();
        SchedulerKillIT.checkNonePlacedTwice(active, violations);
        SchedulerKillIT.checkNoneLeaked(jobs, active, violations);
        assertThat(violations).isEmpty();
    }

    @Test
    void a_job_active_on_two_attempts_or_twice_on_one_rank_is_placed_twice() {
        List<String> violations = new ArrayList<>();
        SchedulerKillIT.checkNonePlacedTwice(List.of(alloc("a1", "j1", 1, 0, "n0", "0"), alloc("a2", "j1", 2, 0, "n1", "0"),
                alloc("a3", "j2", 1, 0, "n2", "0"), alloc("a4", "j2", 1, 0, "n2", "1")), violations);
        assertThat(violations).containsExactlyInAnyOrder(
                "placed twice: j1 has active allocations of attempts [1, 2]",
                "placed twice: j2 attempt 1 rank 0 has active allocations [a3, a4]");
    }

    @Test
    void a_gpu_held_by_two_active_allocations_is_double_booked() {
        List<String> violations = new ArrayList<>();
        SchedulerKillIT.checkNonePlacedTwice(List.of(alloc("a1", "j1", 1, 0, "n0", "0,1"), alloc("a2", "j2", 1, 0, "n0", "1,2")),
                violations);
        assertThat(violations).containsExactly("double-booked: n0 GPU 1 is held by active allocations [a1, a2]");
    }

    @Test
    void an_active_allocation_of_an_ended_job_or_an_old_attempt_is_leaked() {
        List<String> violations = new ArrayList<>();
        SchedulerKillIT.checkNoneLeaked(Map.of("j1", job("j1", "SUCCEEDED", 1), "j2", job("j2", "RUNNING", 3)),
                List.of(alloc("a1", "j1", 1, 0, "n0", "0"), alloc("a2", "j2", 2, 0, "n0", "1"),
                        alloc("a3", "j9", 1, 0, "n0", "2")), violations);
        assertThat(violations).containsExactly(
                "leaked: active allocation a1 (RUNNING) of SUCCEEDED job j1",
                "leaked: active allocation a2 of attempt 2, job j2 is on attempt 3",
                "leaked: active allocation a3 of unknown job j9");
    }

    @Test
    void holdsThatOverlapInTimeAreFoundAndOnesThatFollowEachOtherAreNot() {
        List<String> violations = new ArrayList<>();
        Map<String, List<SchedulerKillIT.Held>> byThing = new java.util.TreeMap<>();
        byThing.put("n0 GPU 0", new ArrayList<>(List.of(new SchedulerKillIT.Held("a1", 0, 100),
                new SchedulerKillIT.Held("a2", 100, 200), new SchedulerKillIT.Held("a3", 150, Long.MAX_VALUE))));
        byThing.put("n0 GPU 1 slice 3", new ArrayList<>(List.of(new SchedulerKillIT.Held("m1", 0, 50),
                new SchedulerKillIT.Held("m2", 60, 70))));
        SchedulerKillIT.overlaps(byThing, "held twice", violations);
        assertThat(violations).singleElement().asString().contains("n0 GPU 0").contains("a2").contains("a3");
    }
}
