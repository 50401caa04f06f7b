package dev.gpucloud.autoscaler.core;

import static dev.gpucloud.autoscaler.core.Fixtures.decide;
import static dev.gpucloud.autoscaler.core.Fixtures.gang;
import static dev.gpucloud.autoscaler.core.Fixtures.job;
import static dev.gpucloud.autoscaler.core.Fixtures.pool;
import static dev.gpucloud.autoscaler.core.Fixtures.running;
import static dev.gpucloud.autoscaler.core.Fixtures.unlimited;
import static dev.gpucloud.autoscaler.core.Fixtures.with;
import static dev.gpucloud.autoscaler.core.Fixtures.withCeiling;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Jobs no type can hold are told why instead of launched for; so are price ceilings and pool restrictions. */
class UnplaceableTest {

    private static String why(Plan plan) {
        assertThat(plan.launches()).isEmpty();
        return plan.decisions(Decision.Kind.UNPLACEABLE).get(0).reason();
    }

    @Test
    void a_worker_larger_than_any_host() {
        assertThat(why(decide(List.of(job("job-9", 1, 16, "H100", true)), List.of(), unlimited())))
                .isEqualTo("skip job-9: no instance type holds 16 GPUs of H100 on one host (the largest has 8)");
    }

    @Test
    void a_model_no_type_has() {
        assertThat(why(decide(List.of(job("j", 1, 1, "B200", true)), List.of(), unlimited())))
                .isEqualTo("skip j: no instance type has GPU model B200");
    }

    @Test
    void a_fabric_gang_on_a_model_without_rdma_types() {
        assertThat(why(decide(List.of(gang("j", 2, 4, "T4")), List.of(), unlimited())))
                .startsWith("skip j: no RDMA-capable instance type has 4 GPUs of T4 per host");
    }

    @Test
    void spot_asked_for_where_none_is_sold_but_any_falls_back_to_on_demand() {
        PendingJob spot = with(job("s", 1, 8, "A100-SXM4-80GB", true), CapacityPreference.SPOT);
        assertThat(why(decide(List.of(spot), List.of(), unlimited())))
                .isEqualTo("skip s: no instance type with 8 GPUs of A100-SXM4-80GB is sold as spot, and the job asked"
                        + " for spot");

        Plan any = decide(List.of(job("a", 1, 8, "A100-SXM4-80GB", true)), List.of(), unlimited());
        assertThat(any.launches()).singleElement().satisfies(l -> {
            assertThat(l.instanceType()).isEqualTo("p4de.24xlarge");
            assertThat(l.capacity()).isEqualTo(Capacity.ON_DEMAND);
        });
    }

    @Test
    void a_price_ceiling_below_every_fit() {
        assertThat(why(decide(List.of(withCeiling(job("j", 1, 8, "A100", true), 10)), List.of(), unlimited())))
                .isEqualTo("skip j: price ceiling 10.00 USD/h: the cheapest fit, p4d.24xlarge SPOT, costs 13.11 USD/h"
                        + " for the job's 8 GPU(s)");
        assertThat(decide(List.of(withCeiling(job("j", 1, 8, "A100", true), 15)), List.of(), unlimited()).launches())
                .hasSize(1);
    }

    @Test
    void a_price_ceiling_keeps_a_job_off_an_expensive_free_host_and_off_expensive_types() {
        PendingJob cheap = withCeiling(job("j", 1, 1, null, false), 0.6);
        Plan plan = decide(List.of(cheap), List.of(running("h1", "p5.48xlarge", Capacity.ON_DEMAND, 8, 0)),
                unlimited());

        assertThat(plan.launches()).singleElement().extracting(Launch::instanceType).isEqualTo("g4dn.xlarge");
    }

    @Test
    void a_pool_without_limits_launches_nothing() {
        PendingJob other = new PendingJob("j", "other", 1, 1, List.of(), false, CapacityPreference.ANY, false, 0, 0);
        assertThat(why(decide(List.of(other), List.of(), unlimited()))).isEqualTo("skip j: pool other is not configured");
    }

    @Test
    void a_pool_restricted_to_some_types_and_a_type_unknown_to_the_catalog() {
        Map<String, PoolLimits> limits = pool(PoolLimits.unlimited().withInstanceTypes(Set.of("g5.xlarge",
                "g5.12xlarge", "x9.large")));
        Plan plan = decide(List.of(job("a", 1, 8, "A100", true), job("g", 1, 1, "A10G", false)), List.of(), limits);

        assertThat(plan.launches()).singleElement().extracting(Launch::instanceType).isEqualTo("g5.xlarge");
        assertThat(plan.decisions(Decision.Kind.UNPLACEABLE)).singleElement().extracting(Decision::reason)
                .isEqualTo("skip a: no instance type among pool train's types has GPU model A100");
        assertThat(plan.decisions(Decision.Kind.CONFIG)).singleElement().extracting(Decision::reason)
                .isEqualTo("pool train names instance type x9.large, which is not in the catalog: ignored");
    }

    @Test
    void a_host_of_a_type_the_catalog_does_not_know_takes_no_demand() {
        Host odd = new Host("h1", "train", "x9.large", Capacity.ON_DEMAND, HostState.RUNNING, 0, 8, 0, 0, -1, true,
                null);
        Plan plan = decide(List.of(job("j", 1, 1, "T4", false)), List.of(odd), unlimited());

        assertThat(plan.hostsToLaunch()).isEqualTo(1);
        assertThat(plan.decisions(Decision.Kind.CONFIG)).singleElement().extracting(Decision::reason).asString()
                .startsWith("host h1: instance type x9.large is not in the catalog");
    }
}
