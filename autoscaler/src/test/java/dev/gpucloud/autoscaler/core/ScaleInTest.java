package dev.gpucloud.autoscaler.core;

import static dev.gpucloud.autoscaler.core.Fixtures.MIN;
import static dev.gpucloud.autoscaler.core.Fixtures.NOW;
import static dev.gpucloud.autoscaler.core.Fixtures.decide;
import static dev.gpucloud.autoscaler.core.Fixtures.idle;
import static dev.gpucloud.autoscaler.core.Fixtures.job;
import static dev.gpucloud.autoscaler.core.Fixtures.pool;
import static dev.gpucloud.autoscaler.core.Fixtures.running;
import static dev.gpucloud.autoscaler.core.Fixtures.underused;
import static dev.gpucloud.autoscaler.core.Fixtures.unlimited;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which hosts the autoscaler lets go, and which it keeps. */
class ScaleInTest {

    @Test
    void an_empty_host_idle_past_the_timeout_is_released() {
        Plan plan = decide(List.of(), List.of(idle("host-7", "p4d.24xlarge", 11), idle("host-8", "p4d.24xlarge", 9)),
                unlimited());

        assertThat(plan.releases()).singleElement().satisfies(r -> {
            assertThat(r.hostId()).isEqualTo("host-7");
            assertThat(r.action()).isEqualTo(Release.Action.RELEASE);
            assertThat(r.reason()).isEqualTo(Release.Reason.IDLE);
        });
        assertThat(plan.decisions(Decision.Kind.RELEASE)).singleElement().extracting(Decision::reason)
                .isEqualTo("release host-7: idle 11 min >= 10 min");
    }

    @Test
    void idle_hosts_go_longest_idle_first_and_never_below_the_minimum() {
        Plan plan = decide(List.of(),
                List.of(idle("h1", "g5.xlarge", 12), idle("h2", "g5.xlarge", 30), idle("h3", "g5.xlarge", 20)),
                pool(PoolLimits.of(1, 10, 100, 10)));

        assertThat(plan.releases()).extracting(Release::hostId).containsExactly("h2", "h3");
        assertThat(plan.decisions(Decision.Kind.KEEP)).singleElement().extracting(Decision::reason)
                .isEqualTo("keep h1: idle 12 min, but pool train is at its minimum of 1 host(s)");
    }

    @Test
    void an_idle_host_a_pending_job_fits_on_is_kept() {
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", true)), List.of(idle("h1", "p4d.24xlarge", 30)),
                unlimited());

        assertThat(plan.releases()).isEmpty();
        assertThat(plan.launches()).isEmpty();
    }

    @Test
    void an_underused_host_is_drained_when_its_checkpointable_jobs_fit_on_the_others() {
        Plan plan = decide(List.of(), List.of(underused("h1", "p4d.24xlarge", 2, 0.25, 12, true),
                running("h2", "p4d.24xlarge", Capacity.ON_DEMAND, 6, 2)), unlimited());

        assertThat(plan.releases()).singleElement().satisfies(r -> {
            assertThat(r.hostId()).isEqualTo("h1");
            assertThat(r.action()).isEqualTo(Release.Action.DRAIN);
            assertThat(r.reason()).isEqualTo(Release.Reason.UNDERUSED);
            assertThat(r.message()).isEqualTo("drain h1: utilization 0.25 < 0.70 for 12 min; its 2 GPU(s) of"
                    + " checkpointable work fit in the 6 free A100-SXM4-40GB GPU(s) of the pool's other hosts");
        });
    }

    @Test
    void an_underused_host_stays_when_its_jobs_have_nowhere_to_go_or_cannot_checkpoint() {
        Plan nowhere = decide(List.of(), List.of(underused("h1", "p4d.24xlarge", 2, 0.25, 12, true),
                running("h2", "p4d.24xlarge", Capacity.ON_DEMAND, 1, 7)), unlimited());
        Plan pinned = decide(List.of(), List.of(underused("h1", "p4d.24xlarge", 2, 0.25, 12, false),
                running("h2", "p4d.24xlarge", Capacity.ON_DEMAND, 6, 2)), unlimited());
        Plan busy = decide(List.of(), List.of(underused("h1", "p4d.24xlarge", 2, 0.85, 12, true),
                running("h2", "p4d.24xlarge", Capacity.ON_DEMAND, 6, 2)), unlimited());
        Plan recent = decide(List.of(), List.of(underused("h1", "p4d.24xlarge", 2, 0.25, 5, true),
                running("h2", "p4d.24xlarge", Capacity.ON_DEMAND, 6, 2)), unlimited());

        assertThat(nowhere.releases()).isEmpty();
        assertThat(pinned.releases()).isEmpty();
        assertThat(busy.releases()).isEmpty();
        assertThat(recent.releases()).isEmpty();
    }

    @Test
    void a_host_that_never_registered_is_released_and_its_demand_launched_again() {
        Host stuck = Host.launching("h1", "train", "p4d.24xlarge", Capacity.SPOT, NOW - 16 * MIN, null);
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", true)), List.of(stuck), pool(PoolLimits.of(1, 10, 100, 10)));

        assertThat(plan.releases()).singleElement().satisfies(r -> {
            assertThat(r.reason()).isEqualTo(Release.Reason.NEVER_REGISTERED);
            assertThat(r.message()).isEqualTo("release h1: never registered, launched 16 min ago (launch timeout 15 min)");
        });
        assertThat(plan.launches()).singleElement().extracting(Launch::jobIds).isEqualTo(List.of("j1"));
    }

    @Test
    void a_host_still_within_its_launch_timeout_is_waited_for() {
        Host coming = Host.launching("h1", "train", "p4d.24xlarge", Capacity.SPOT, NOW - 14 * MIN, null);
        Plan plan = decide(List.of(job("j1", 1, 8, "A100", true)), List.of(coming), unlimited());

        assertThat(plan.releases()).isEmpty();
        assertThat(plan.launches()).isEmpty();
    }

    @Test
    void a_drained_host_is_released_once_empty() {
        Host draining = new Host("h1", "train", "g5.xlarge", Capacity.ON_DEMAND, HostState.DRAINING, 0, 1, 0, 0,
                NOW - MIN, true, null);
        Host stillBusy = new Host("h2", "train", "g5.xlarge", Capacity.ON_DEMAND, HostState.DRAINING, 0, 0, 1, 1, -1,
                true, null);
        Plan plan = decide(List.of(), List.of(draining, stillBusy), unlimited());

        assertThat(plan.releases()).singleElement().satisfies(r -> {
            assertThat(r.hostId()).isEqualTo("h1");
            assertThat(r.reason()).isEqualTo(Release.Reason.DRAINED);
        });
    }

    @Test
    void a_draining_host_takes_no_demand() {
        Host draining = new Host("h1", "train", "p4d.24xlarge", Capacity.ON_DEMAND, HostState.DRAINING, 0, 6, 2, 0.2,
                -1, true, null);
        Plan plan = decide(List.of(job("j1", 1, 4, "A100", true)), List.of(draining), unlimited());

        assertThat(plan.hostsToLaunch()).isEqualTo(1);
    }
}
