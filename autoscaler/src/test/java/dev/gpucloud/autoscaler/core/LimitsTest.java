package dev.gpucloud.autoscaler.core;

import static dev.gpucloud.autoscaler.core.Fixtures.MIN;
import static dev.gpucloud.autoscaler.core.Fixtures.NOW;
import static dev.gpucloud.autoscaler.core.Fixtures.decide;
import static dev.gpucloud.autoscaler.core.Fixtures.gang;
import static dev.gpucloud.autoscaler.core.Fixtures.job;
import static dev.gpucloud.autoscaler.core.Fixtures.pool;
import static dev.gpucloud.autoscaler.core.Fixtures.running;
import static dev.gpucloud.autoscaler.core.Fixtures.since;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A pool's host, budget and launch-rate limits hold launches back, and say so. */
class LimitsTest {

    @Test
    void the_budget_counts_the_hosts_the_pool_has_and_the_new_ones() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", false)),
                List.of(running("h1", "p4d.24xlarge", Capacity.ON_DEMAND, 0, 8)), pool(PoolLimits.of(0, 10, 40, 10)));

        assertThat(plan.launches()).isEmpty();
        assertThat(plan.decisions(Decision.Kind.HOLD)).singleElement().extracting(Decision::reason)
                .isEqualTo("hold j1: budget 40.0 USD/h of pool train would be exceeded (32.8 + 32.8)");
    }

    @Test
    void a_budget_of_zero_launches_nothing() {
        Plan plan = decide(List.of(job("j1", 1, 1, "T4", false)), List.of(), pool(PoolLimits.of(0, 10, 0, 10)));

        assertThat(plan.launches()).isEmpty();
        assertThat(plan.decisions(Decision.Kind.HOLD)).singleElement().extracting(Decision::reason)
                .isEqualTo("hold j1: budget of pool train is 0 USD/h: no launches");
    }

    @Test
    void a_held_job_does_not_stop_a_later_one_that_fits() {
        PendingJob big = since(job("big", 1, 8, "A100", false), NOW - 30 * MIN);
        PendingJob small = job("small", 1, 1, "T4", false);
        Plan plan = decide(List.of(big, small), List.of(), pool(PoolLimits.of(0, 10, 10, 10)));

        assertThat(plan.launches()).singleElement().extracting(Launch::jobIds).isEqualTo(List.of("small"));
        assertThat(plan.decisions(Decision.Kind.HOLD)).extracting(Decision::subject).containsExactly("big");
    }

    @Test
    void the_launch_rate_counts_hosts_launched_in_the_last_minute_oldest_job_first() {
        List<PendingJob> jobs = List.of(since(job("j1", 1, 8, "A100", false), NOW - 3 * MIN),
                since(job("j2", 1, 8, "A100", false), NOW - 2 * MIN), since(job("j3", 1, 8, "A100", false), NOW - MIN));
        PoolLimits twoPerMinute = PoolLimits.of(0, 100, 1000, 2);

        Plan fresh = decide(jobs, List.of(), pool(twoPerMinute));
        Plan afterTwo = Autoscaler.decide(NOW, jobs, List.of(), List.of(new LaunchRecord("train", NOW - 30_000, 2)),
                Fixtures.AWS, pool(twoPerMinute), Fixtures.CONFIG);
        Plan aMinuteLater = Autoscaler.decide(NOW, jobs, List.of(),
                List.of(new LaunchRecord("train", NOW - 61_000, 2)), Fixtures.AWS, pool(twoPerMinute), Fixtures.CONFIG);

        assertThat(fresh.launches()).singleElement().extracting(Launch::jobIds).isEqualTo(List.of("j1", "j2"));
        assertThat(fresh.decisions(Decision.Kind.HOLD)).singleElement().extracting(Decision::reason)
                .isEqualTo("hold j3: launch rate 2/min of pool train would be exceeded (2 in the last minute + 1)");
        assertThat(afterTwo.launches()).isEmpty();
        assertThat(aMinuteLater.hostsToLaunch()).isEqualTo(2);
    }

    @Test
    void without_a_history_the_rate_counts_the_supply_launched_in_the_last_minute() {
        Host justAsked = Host.launching("h1", "train", "g4dn.xlarge", Capacity.ON_DEMAND, NOW - 20_000, null);
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", false)), List.of(justAsked),
                pool(PoolLimits.of(0, 100, 1000, 1)));

        assertThat(plan.launches()).isEmpty();
        assertThat(plan.decisions(Decision.Kind.HOLD)).singleElement().extracting(Decision::reason).asString()
                .contains("launch rate 1/min");
    }

    @Test
    void max_hosts_counts_every_host_the_pool_has() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", false), job("j2", 1, 8, "A100", false)),
                List.of(running("h1", "g5.xlarge", Capacity.ON_DEMAND, 0, 1)), pool(PoolLimits.of(0, 2, 1000, 10)));

        assertThat(plan.hostsToLaunch()).isEqualTo(1);
        assertThat(plan.decisions(Decision.Kind.HOLD)).singleElement().extracting(Decision::reason)
                .isEqualTo("hold j2: max hosts 2 of pool train would be exceeded (2 + 1)");
    }

    @Test
    void a_gang_is_launched_whole_or_not_at_all() {
        Plan plan = decide(List.of(gang("g1", 4, 8, "A100")), List.of(), pool(PoolLimits.of(0, 3, 1000, 10)));

        assertThat(plan.launches()).isEmpty();
        assertThat(plan.decisions(Decision.Kind.HOLD)).extracting(Decision::subject).containsExactly("g1");
    }

    @Test
    void released_hosts_no_longer_count_against_the_budget() {
        Plan plan = decide(List.of(job("j1", 1, 1, "T4", false)), List.of(Fixtures.idle("h1", "p4d.24xlarge", 30)),
                pool(PoolLimits.of(0, 10, 1, 10)));

        assertThat(plan.releases()).extracting(Release::hostId).containsExactly("h1");
        assertThat(plan.launches()).singleElement().extracting(Launch::instanceType).isEqualTo("g4dn.xlarge");
    }

    @Test
    void spot_falls_back_to_on_demand_only_where_the_budget_holds_on_demand() {
        PendingJob j = job("j1", 1, 8, "A100", true);
        Plan roomy = decide(List.of(j), List.of(), pool(PoolLimits.of(0, 10, 40, 10)));
        Plan tight = decide(List.of(j), List.of(), pool(PoolLimits.of(0, 10, 20, 10)));

        assertThat(roomy.launches()).singleElement().extracting(Launch::onDemandFallback).isEqualTo(true);
        assertThat(tight.launches()).singleElement().satisfies(l -> {
            assertThat(l.capacity()).isEqualTo(Capacity.SPOT);
            assertThat(l.onDemandFallback()).isFalse();
        });
        assertThat(tight.decisions(Decision.Kind.LAUNCH)).singleElement().extracting(Decision::reason).asString()
                .endsWith("no on-demand fallback: the budget does not hold it");
    }
}
