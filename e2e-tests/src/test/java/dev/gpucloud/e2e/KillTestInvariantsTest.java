package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.e2e.KillTestBilling.Billed;
import dev.gpucloud.e2e.KillTestBilling.Made;
import dev.gpucloud.e2e.SchedulerKillIT.Alloc;
import dev.gpucloud.e2e.SchedulerKillIT.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

    // ---------------------------------------------------------------- billing

    static final long S = 1_000_000; // a second, in the microseconds both sides' times are in

    /** An allocation of one attempt and rank that the scheduler made at 100 s, started at 101 s and ended at 110 s. */
    static Made made(String id, String job, int attempt, int rank, int units, Integer exitCode) {
        return new Made(id, job, "t", attempt, rank, units, 100 * S, 101 * S, 110 * S, exitCode);
    }

    /** Billing's record of it: usage from 101 s for {@code seconds}. */
    static Billed billed(String id, String job, int units, long seconds) {
        return new Billed(id, job, "t", units, 101 * S, 101 * S + seconds * S, seconds * S);
    }

    static <V> Map<String, V> byId(Map<String, V> map) {
        return new TreeMap<>(map);
    }

    @Test
    void every_allocation_that_ran_billed_once_for_its_run_has_no_violation() {
        Map<String, Made> made = byId(Map.of("a1", made("a1", "gang", 1, 0, 4, 0), "a2", made("a2", "gang", 1, 1, 4, 0),
                "a3", made("a3", "one", 1, 0, 1, 143),
                "a4", new Made("a4", "never", "t", 1, 0, 1, 100 * S, 0, 105 * S, null))); // cancelled before it started
        Map<String, Billed> billed = byId(Map.of("a1", billed("a1", "gang", 4, 3), "a2", billed("a2", "gang", 4, 3),
                "a3", billed("a3", "one", 1, 2)));
        List<String> violations = new ArrayList<>();
        KillTestBilling.checkBilledAsMade(made, billed, Map.of("gang", 3 * S, "one", 5 * S), violations);
        KillTestBilling.checkInvoiced(billed, Map.of("gang", 480L, "one", 60L), violations);
        assertThat(violations).isEmpty();
    }

    @Test
    void a_rerun_after_a_lost_attempt_is_a_second_minimum() {
        Map<String, Made> made = byId(Map.of("a1", made("a1", "j1", 1, 0, 1, null), "a2", made("a2", "j1", 2, 0, 1, 0)));
        Map<String, Billed> billed = byId(Map.of("a1", billed("a1", "j1", 1, 2), "a2", billed("a2", "j1", 1, 3)));
        List<String> violations = new ArrayList<>();
        KillTestBilling.checkBilledAsMade(made, billed, Map.of("j1", 3 * S), violations);
        KillTestBilling.checkInvoiced(billed, Map.of("j1", 120L), violations);
        assertThat(violations).containsExactly("second minimum: job j1 is billed for allocations of attempts [1, 2]");
    }

    @Test
    void usage_of_an_allocation_the_scheduler_never_made_or_a_started_one_without_usage_is_found() {
        Map<String, Made> made = byId(Map.of("a1", made("a1", "j1", 1, 0, 1, 0), "a2", made("a2", "j2", 1, 0, 8, 0)));
        Map<String, Billed> billed = byId(Map.of("a1", billed("a1", "j1", 1, 3), "ghost", billed("ghost", "j1", 1, 3)));
        List<String> violations = new ArrayList<>();
        KillTestBilling.checkBilledAsMade(made, billed, Map.of(), violations);
        assertThat(violations).containsExactly(
                "billed for an allocation the scheduler never made: ghost (job j1 of t, 1 unit(s))",
                "unbilled: allocation a2 of job j2 started at 1970-01-01T00:01:41Z, but billing has no usage of it");
    }

    @Test
    void usage_longer_than_the_command_or_outside_the_allocations_life_or_of_another_job_is_found() {
        Map<String, Made> made = byId(Map.of("a1", made("a1", "j1", 1, 0, 1, 0), "a2", made("a2", "j2", 1, 0, 1, 143),
                "a3", made("a3", "j3", 1, 0, 8, 0), "a4", made("a4", "j4", 1, 0, 1, 0)));
        Map<String, Billed> billed = byId(Map.of("a1", billed("a1", "j1", 1, 2), "a2", billed("a2", "j2", 1, 4),
                "a3", billed("a3", "j9", 1, 3),
                "a4", new Billed("a4", "j4", "t", 1, 108 * S, 111 * S, 3 * S))); // runs on past the scheduler's end
        List<String> violations = new ArrayList<>();
        KillTestBilling.checkBilledAsMade(made, billed, Map.of("j1", 3 * S, "j2", 3 * S, "j4", 3 * S), violations);
        assertThat(violations).containsExactly(
                "allocation a1 of job j1 (exit 0) is billed for 2 s of usage; its command runs 3 s",
                "allocation a2 of job j2 (exit 143) is billed for 4 s of usage; its command runs 3 s",
                "allocation a3 is billed to job j9 of t for 1 unit(s); the scheduler made it for job j3 of t with 8",
                "allocation a4 of job j4 is billed for usage from 1970-01-01T00:01:48Z to 1970-01-01T00:01:51Z, outside its"
                        + " life from 1970-01-01T00:01:40Z to 1970-01-01T00:01:50Z");
    }

    @Test
    void an_invoice_that_differs_from_the_allocations_under_the_policy_is_found() {
        Map<String, Billed> billed = byId(Map.of("a1", billed("a1", "short", 2, 3), "a2", billed("a2", "long", 1, 190),
                "a3", new Billed("a3", "odd", "t", 1, 0, 60_000_001, 60_000_001)));
        List<String> violations = new ArrayList<>();
        KillTestBilling.checkInvoiced(billed, Map.of("short", 120L, "long", 190L, "odd", 61L), violations);
        assertThat(violations).isEmpty(); // 60 s x 2 units; 190 s; 60.000001 s rounds up to 61
        KillTestBilling.checkInvoiced(billed, Map.of("short", 6L, "long", 190L, "odd", 61L, "stray", 60L), violations);
        assertThat(violations).containsExactly(
                "job short is invoiced 6 SKU-seconds; its allocations come to 120 (a1: 3 s x 2)",
                "job stray is invoiced 60 SKU-seconds; its allocations come to 0 ()");
    }

    @Test
    void a_rerun_is_invoiced_without_a_second_minimum() {
        Map<String, Billed> billed = byId(Map.of("j1-a1-r0", billed("j1-a1-r0", "j1", 1, 2),
                "j1-a2-r0", billed("j1-a2-r0", "j1", 1, 3)));
        List<String> violations = new ArrayList<>();
        KillTestBilling.checkInvoiced(billed, Map.of("j1", 63L), violations);
        assertThat(violations).isEmpty(); // 60 s for the first attempt, 3 s for the rerun
    }
}
