package dev.gpucloud.autoscaler.core;

import static dev.gpucloud.autoscaler.core.Fixtures.MIN;
import static dev.gpucloud.autoscaler.core.Fixtures.NOW;
import static dev.gpucloud.autoscaler.core.Fixtures.carriedOut;
import static dev.gpucloud.autoscaler.core.Fixtures.decide;
import static dev.gpucloud.autoscaler.core.Fixtures.gang;
import static dev.gpucloud.autoscaler.core.Fixtures.job;
import static dev.gpucloud.autoscaler.core.Fixtures.running;
import static dev.gpucloud.autoscaler.core.Fixtures.unlimited;
import static dev.gpucloud.autoscaler.core.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** What the autoscaler launches for pending demand, and what it leaves to the hosts it has. */
class ScaleOutTest {

    @Test
    void a_checkpointable_job_gets_spot_with_on_demand_fallback() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", true)), List.of(), unlimited());

        assertThat(plan.launches()).singleElement().satisfies(l -> {
            assertThat(l.instanceType()).isEqualTo("p4d.24xlarge");
            assertThat(l.capacity()).isEqualTo(Capacity.SPOT);
            assertThat(l.onDemandFallback()).isTrue();
            assertThat(l.count()).isEqualTo(1);
            assertThat(l.jobIds()).containsExactly("j1");
            assertThat(l.placementGroup()).isNull();
        });
        assertThat(plan.decisions(Decision.Kind.LAUNCH)).singleElement().extracting(Decision::reason)
                .isEqualTo("launch 1 x p4d.24xlarge SPOT for 1 job(s): j1 (1x8 A100, checkpointable); 13.1 USD/h,"
                        + " on-demand fallback");
    }

    @Test
    void a_job_that_cannot_checkpoint_gets_on_demand_and_so_does_one_that_asked_for_it() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", false),
                with(job("j2", 1, 8, "A100", true), CapacityPreference.ON_DEMAND)), List.of(), unlimited());

        assertThat(plan.launches()).singleElement().satisfies(l -> {
            assertThat(l.capacity()).isEqualTo(Capacity.ON_DEMAND);
            assertThat(l.onDemandFallback()).isFalse();
            assertThat(l.count()).isEqualTo(2);
            assertThat(l.jobIds()).containsExactly("j1", "j2");
        });
    }

    @Test
    void a_fabric_gang_of_four_hosts_gets_one_placement_group_of_one_rdma_type() {
        Plan plan = decide(List.of(gang("g1", 4, 8, "A100"), gang("g2", 2, 8, "H100")), List.of(), unlimited());

        assertThat(plan.launches()).hasSize(2);
        assertThat(plan.launches().get(0)).satisfies(l -> {
            assertThat(l.instanceType()).isEqualTo("p4d.24xlarge");
            assertThat(l.count()).isEqualTo(4);
            assertThat(l.placementGroup()).isEqualTo("pg-g1");
            assertThat(l.jobIds()).containsExactly("g1");
        });
        assertThat(plan.launches().get(1)).satisfies(l -> {
            assertThat(l.instanceType()).isEqualTo("p5.48xlarge");
            assertThat(l.placementGroup()).isEqualTo("pg-g2");
        });
    }

    @Test
    void small_jobs_share_a_host_and_each_takes_the_cheapest_type_that_holds_it() {
        List<PendingJob> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            jobs.add(job("a" + i, 1, 1, "A100", false));
        }
        jobs.add(job("t1", 1, 1, null, false)); // any GPU, on demand: the cheapest single-GPU host
        jobs.add(job("g1", 2, 4, "A10G", false)); // two workers of 4 A10G: two g5.12xlarge

        Plan plan = decide(jobs, List.of(), unlimited());

        assertThat(plan.launches()).extracting(Launch::instanceType, Launch::count)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("g4dn.xlarge", 1),
                        org.assertj.core.groups.Tuple.tuple("g5.12xlarge", 2),
                        org.assertj.core.groups.Tuple.tuple("p4d.24xlarge", 1));
    }

    @Test
    void a_worker_never_spans_hosts_and_a_gang_never_shares_with_others() {
        Plan plan = decide(List.of(job("j1", 3, 6, "A100", false), job("j2", 3, 2, "A100", false)), List.of(),
                unlimited());
        // three 6-GPU workers need three hosts; the 2-GPU workers fill the rest of them
        assertThat(plan.hostsToLaunch()).isEqualTo(3);
    }

    @Test
    void free_gpus_on_registered_hosts_absorb_demand() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", true), job("j2", 1, 2, "A10G", true)),
                List.of(running("h1", "p4d.24xlarge", Capacity.ON_DEMAND, 8, 0),
                        running("h2", "g5.12xlarge", Capacity.SPOT, 2, 2)),
                unlimited());

        assertThat(plan.launches()).isEmpty();
        assertThat(plan.decisions(Decision.Kind.WAIT)).singleElement().satisfies(d -> {
            assertThat(d.jobIds()).containsExactly("j1", "j2");
            assertThat(d.reason()).startsWith("wait: 2 job(s) of pool train fit on free or launching GPUs");
        });
    }

    @Test
    void a_job_that_cannot_checkpoint_does_not_wait_for_a_spot_host() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", false)),
                List.of(running("h1", "p4d.24xlarge", Capacity.SPOT, 8, 0)), unlimited());

        assertThat(plan.launches()).singleElement().extracting(Launch::capacity).isEqualTo(Capacity.ON_DEMAND);
    }

    @Test
    void workers_that_do_not_fit_on_free_gpus_are_launched_for_and_the_rest_wait() {
        Plan plan = decide(List.of(job("j1", 3, 8, "A100", false)),
                List.of(running("h1", "p4d.24xlarge", Capacity.ON_DEMAND, 8, 0)), unlimited());

        assertThat(plan.hostsToLaunch()).isEqualTo(2);
    }

    @Test
    void launching_hosts_are_on_their_way_so_a_second_round_launches_nothing_more() {
        List<PendingJob> jobs = List.of(gang("g1", 4, 8, "A100"), gang("g2", 3, 4, "H100"),
                job("a1", 1, 8, "A100", true), job("a2", 1, 8, "A100", true), job("a3", 1, 8, "A100", true),
                job("t1", 1, 1, "T4", false), job("t2", 1, 1, "T4", false), job("any", 1, 1, null, true),
                job("any2", 2, 1, null, false), job("s1", 2, 4, "A10G", true), job("s2", 1, 3, "A10G", true),
                job("l1", 1, 2, "L4", false));

        Plan first = decide(jobs, List.of(), unlimited());
        assertThat(first.hostsToLaunch()).isGreaterThan(10);

        List<Host> supply = carriedOut(first, NOW);
        Plan second = Autoscaler.decide(NOW + 10_000, jobs, supply, Fixtures.AWS, unlimited(), Fixtures.CONFIG);

        assertThat(second.launches()).isEmpty();
        assertThat(second.releases()).isEmpty();
        assertThat(second.decisions(Decision.Kind.WAIT)).singleElement().extracting(Decision::jobIds)
                .isEqualTo(jobs.stream().map(PendingJob::jobId).sorted().toList());
    }

    @Test
    void a_gangs_launching_hosts_are_kept_for_the_gang_and_not_taken_by_other_jobs() {
        List<Host> group = List.of(Host.launching("n1", "train", "p4d.24xlarge", Capacity.SPOT, NOW - MIN, "pg-g1"),
                Host.launching("n2", "train", "p4d.24xlarge", Capacity.SPOT, NOW - MIN, "pg-g1"));
        Plan plan = decide(List.of(job("a1", 1, 8, "A100", true), gang("g1", 2, 8, "A100")), group, unlimited());

        assertThat(plan.launches()).singleElement().satisfies(l -> {
            assertThat(l.jobIds()).containsExactly("a1");
            assertThat(l.placementGroup()).isNull();
        });
        assertThat(plan.decisions(Decision.Kind.WAIT)).singleElement().extracting(Decision::jobIds)
                .isEqualTo(List.of("g1"));
    }

    @Test
    void a_new_gang_does_not_take_the_placement_group_on_its_way_to_another() {
        List<Host> group = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            group.add(Host.launching("n" + i, "train", "p4d.24xlarge", Capacity.SPOT, NOW - MIN, "pg-g1"));
        }
        PendingJob older = Fixtures.since(gang("g0", 4, 8, "A100"), NOW - 30 * MIN);
        Plan plan = decide(List.of(older, gang("g1", 4, 8, "A100")), group, unlimited());

        assertThat(plan.launches()).singleElement().satisfies(l -> {
            assertThat(l.jobIds()).containsExactly("g0");
            assertThat(l.placementGroup()).isEqualTo("pg-g0");
        });
    }

    @Test
    void a_gang_waits_for_its_own_placement_group_and_not_for_loose_rdma_hosts() {
        Plan plan = decide(List.of(gang("g1", 2, 8, "A100")),
                List.of(running("h1", "p4d.24xlarge", Capacity.SPOT, 8, 0),
                        running("h2", "p4d.24xlarge", Capacity.SPOT, 8, 0)),
                unlimited());

        assertThat(plan.launches()).singleElement().extracting(Launch::placementGroup).isEqualTo("pg-g1");
    }

    @Test
    void a_pool_below_its_minimum_is_topped_up_with_its_cheapest_type() {
        Plan plan = decide(List.of(), List.of(), Fixtures.pool(PoolLimits.of(2, 10, 100, 10)));

        assertThat(plan.launches()).singleElement().satisfies(l -> {
            assertThat(l.instanceType()).isEqualTo("g4dn.xlarge");
            assertThat(l.count()).isEqualTo(2);
            assertThat(l.capacity()).isEqualTo(Capacity.ON_DEMAND);
            assertThat(l.jobIds()).isEmpty();
        });
    }

    @Test
    void the_plan_does_not_depend_on_the_order_of_the_inputs() {
        List<PendingJob> jobs = new ArrayList<>();
        Random r = new Random(7);
        String[] models = {"A100", "H100", "T4", "A10G", null};
        for (int i = 0; i < 200; i++) {
            jobs.add(job("j" + i, 1 + r.nextInt(3), 1 << r.nextInt(4), models[r.nextInt(models.length)],
                    r.nextBoolean()));
        }
        List<Host> hosts = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            hosts.add(running("h" + i, i % 2 == 0 ? "p4d.24xlarge" : "g5.12xlarge", Capacity.ON_DEMAND, i % 5, 1));
        }
        Plan a = decide(jobs, hosts, unlimited());
        Collections.shuffle(jobs, new Random(1));
        Collections.shuffle(hosts, new Random(2));
        Plan b = decide(jobs, hosts, unlimited());

        assertThat(b).isEqualTo(a);
    }

    @Test
    void every_one_of_ten_thousand_pending_jobs_gets_an_answer() {
        // speed is the benchmark's business (AutoscalerDecisionBenchmark); this checks that nothing is dropped
        List<PendingJob> jobs = new ArrayList<>();
        Random r = new Random(3);
        String[] models = {"A100", "H100", "T4", "A10G", "L4", "V100", "B200", null};
        for (int i = 0; i < 10_000; i++) {
            PendingJob j = job("j" + i, 1 + r.nextInt(4), 1 << r.nextInt(5), models[r.nextInt(models.length)],
                    r.nextBoolean());
            jobs.add(Fixtures.since(j, NOW - r.nextInt(60) * MIN));
        }
        List<Host> hosts = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            hosts.add(running("h" + i, i % 3 == 0 ? "p4d.24xlarge" : "g4dn.12xlarge", Capacity.ON_DEMAND, i % 4, 1));
        }
        Plan plan = decide(jobs, hosts, Fixtures.pool(PoolLimits.of(0, 1_500, 20_000, 1_000)));

        java.util.Set<String> answered = new java.util.HashSet<>();
        plan.decisions().forEach(d -> answered.addAll(d.jobIds()));
        assertThat(answered).containsAll(jobs.stream().map(PendingJob::jobId).toList());
        assertThat(plan.decisions(Decision.Kind.WAIT)).isNotEmpty();
        assertThat(plan.decisions(Decision.Kind.HOLD)).isNotEmpty();
        assertThat(plan.decisions(Decision.Kind.UNPLACEABLE)).isNotEmpty();
        assertThat(plan.hostsToLaunch()).isBetween(1, 1_200);
    }
}
