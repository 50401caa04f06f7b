package dev.gpucloud.scheduler.sim.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.scheduler.sim.policies.FineLas;
import dev.gpucloud.scheduler.sim.policies.Fifo;
import dev.gpucloud.scheduler.sim.policies.Production;
import dev.gpucloud.scheduler.sim.policies.Srtf;
import dev.gpucloud.scheduler.sim.policies.Tiresias;
import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Small traces whose answers were worked out by hand (the comments give the schedule). */
class SimulatorTest {

    private static TraceJob job(String id, double submitS, double durationS, int gpus) {
        return TraceJob.of(id, Math.round(submitS * 1000), Math.round(durationS * 1000), gpus, "t");
    }

    /** A: 0 s, 10 s, 1 GPU; B: 0 s, 4 s, 2 GPUs; C: 1 s, 2 s, 1 GPU; on one host of 2 GPUs. */
    private static final List<TraceJob> THREE = List.of(job("A", 0, 10, 1), job("B", 0, 4, 2), job("C", 1, 2, 1));

    private static double[] jcts(SimResult r) {
        return r.jctSeconds();
    }

    private static SimResult run(List<TraceJob> trace, SimCluster c, Policy p, SimConfig cfg) {
        return new Simulator(trace, c, p, cfg).run();
    }

    @Test
    void fifo_backfills_and_never_preempts() {
        // 0: A starts, B (2 GPUs) does not fit; 1: C backfills, ends 3; 10: A ends, B runs to 14
        SimResult r = run(THREE, SimCluster.uniform("h", 1, 2), new Fifo(), SimConfig.defaults());
        assertThat(jcts(r)).containsExactly(10, 14, 2);
        assertThat(r.makespanSeconds()).isEqualTo(14);
        assertThat(r.preemptions()).isZero();
        assertThat(r.averageQueueingSeconds()).isEqualTo(10.0 / 3);
    }

    @Test
    void srtf_preempts_for_the_shortest_remaining_job() {
        // 0: B (4 s) before A (10 s); 1: C (2 s) < B (3 s left) < A: C and A run, B is preempted;
        // 3: C done; B (3 s) < A (8 s): B displaces A, runs 3..6; A resumes 6..14
        SimResult r = run(THREE, SimCluster.uniform("h", 1, 2), Srtf.srtf(), SimConfig.defaults());
        assertThat(jcts(r)).containsExactly(14, 6, 2);
        assertThat(r.preemptions()).isEqualTo(2);
        assertThat(r.averageJctSeconds()).isEqualTo(22.0 / 3);
    }

    @Test
    void restarts_pay_the_checkpoint_and_restore_cost() {
        // as above, with 0.5 s checkpoint + 0.5 s restore on each resume: B resumes at 3, runs 4..7;
        // A resumes at 7, restores to 8, 8 s left: ends 16
        SimResult r = run(THREE, SimCluster.uniform("h", 1, 2), Srtf.srtf(), SimConfig.defaults().withOverheads(500, 500));
        assertThat(jcts(r)).containsExactly(16, 7, 2);
        assertThat(r.overheadGpuHours() * 3600).isCloseTo(2 * 1 + 1 * 1, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void srsf_weighs_remaining_time_by_gpus() {
        // one host of 2 GPUs; X: 0 s, 3 s, 2 GPUs (service 6); Y: 0 s, 4 s, 1 GPU (service 4); Z: 0 s, 4 s, 1 GPU
        // SRTF: X (3) first, 0..3; then Y and Z together 3..7.  SRSF: Y and Z (4) first 0..4, then X 4..7.
        List<TraceJob> t = List.of(job("X", 0, 3, 2), job("Y", 0, 4, 1), job("Z", 0, 4, 1));
        assertThat(jcts(run(t, SimCluster.uniform("h", 1, 2), Srtf.srtf(), SimConfig.defaults()))).containsExactly(3, 7, 7);
        assertThat(jcts(run(t, SimCluster.uniform("h", 1, 2), Srtf.srsf(), SimConfig.defaults()))).containsExactly(7, 4, 4);
    }

    @Test
    void tiresias_demotes_at_the_queue_limit_and_is_fifo_within_a_queue() {
        // one GPU, limit 2 GPU-s. A: 0 s, 5 s; B: 1 s, 3 s. 1: both in queue 0, A (earlier) keeps running;
        // 2: A reaches 2 GPU-s, demoted: B runs 2..4 and is demoted; both in queue 1: A (earlier) 4..7, B 7..8
        List<TraceJob> t = List.of(job("A", 0, 5, 1), job("B", 1, 3, 1));
        SimResult r = run(t, SimCluster.uniform("h", 1, 1), Tiresias.withLimits(2), SimConfig.defaults());
        assertThat(jcts(r)).containsExactly(7, 7);
        assertThat(r.preemptions()).isEqualTo(2);
    }

    @Test
    void jobs_over_one_host_take_whole_hosts_and_small_ones_stay_on_one_host() {
        // 2 hosts of 4 GPUs. S: 3 GPUs, 0..2 s on one host; W: 6 GPUs needs both whole hosts: 2..7.
        // T: 2 GPUs at 0 s fits the other host: 0..1.
        List<TraceJob> t = List.of(job("S", 0, 2, 3), job("T", 0, 1, 2), job("W", 0, 5, 6));
        SimResult r = run(t, SimCluster.uniform("h", 2, 4), new Fifo(), SimConfig.defaults());
        assertThat(jcts(r)).containsExactly(2, 1, 7);
        // allocated GPU-seconds: S 3x2 + T 2x1 + W 8x5 (two whole hosts) over 8 GPUs x 7 s
        assertThat(r.utilization()).isCloseTo(48.0 / 56, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void a_run_is_deterministic_for_its_seed_and_spot_losses_roll_back_to_the_last_checkpoint() {
        List<TraceJob> t = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            t.add(job("j" + i, i * 600, 3_600 + i * 97, 1 + i % 4));
        }
        String[] ids = {"od", "spot-a", "spot-b"};
        SimConfig cfg = SimConfig.defaults().withCheckpointInterval(1_800_000).withSpot(0.5, 120_000, 600_000)
                .withOverheads(0, 30_000).withSeed(7);
        SimResult a = run(t, spotCluster(ids), new FineLas(), cfg);
        SimResult b = run(t, spotCluster(ids), new FineLas(), cfg);
        assertThat(a.jctSeconds()).containsExactly(b.jctSeconds());
        assertThat(a.spotInterruptions()).isPositive();
        assertThat(a.lostGpuHours()).isPositive();
        for (SimJob j : a.jobs()) {
            // a lost stretch is shorter than the checkpoint interval, per interruption
            assertThat(j.lostGpuMillis()).isLessThanOrEqualTo((long) j.interruptions() * 1_800_000 * j.gpus());
            assertThat(j.finishMillis() - j.submitMillis()).isGreaterThanOrEqualTo(j.durationMillis());
        }
        assertThat(a.fleetCostMicros()).isLessThan(a.onDemandFleetCostMicros());
    }

    private static SimCluster spotCluster(String[] ids) {
        return new SimCluster("mixed", ids, new int[] {4, 4, 4}, new boolean[] {false, true, true},
                new long[] {10_000_000, 3_000_000, 3_000_000}, new long[] {10_000_000, 10_000_000, 10_000_000});
    }

    @Test
    void fine_las_places_through_the_placement_framework_on_a_modelled_cluster() {
        // the Muri cluster (8 x 8 GPUs). A: 0 s, 10 s, 64 GPUs (an RDMA gang of 8 whole hosts); B: 1 s, 2 s,
        // 8 GPUs. At 1 s both are in the first queue; B has fewer GPUs, ranks first and takes a host, so A is
        // preempted; B runs 1..3, A resumes at 3 with 9 s left: 12
        List<TraceJob> t = List.of(job("A", 0, 10, 64), job("B", 1, 2, 8));
        FineLas p = new FineLas();
        SimResult r = run(t, SimCluster.of(dev.gpucloud.scheduler.sim.cluster.MuriCluster.build(), h -> 0), p,
                SimConfig.defaults());
        assertThat(jcts(r)).containsExactly(12, 2);
        assertThat(p.bridge()).isNotNull();
        assertThat(p.bridge().placements()).isEqualTo(3);
        assertThat(p.bridge().refusals()).isZero();
    }

    @Test
    void production_with_las_off_is_the_services_queue_in_line_without_preemption_among_equals() {
        // the Muri cluster. A: 0 s, 10 s, 64 GPUs; B: 1 s, 2 s, 8 GPUs. With LAS off the service's queue places
        // in line and NORMAL jobs do not preempt each other: A runs 0..10, B waits for it and runs 10..12
        List<TraceJob> t = List.of(job("A", 0, 10, 64), job("B", 1, 2, 8));
        Production p = new Production(dev.gpucloud.scheduler.queue.Las.OFF);
        SimResult r = run(t, SimCluster.of(dev.gpucloud.scheduler.sim.cluster.MuriCluster.build(), h -> 0), p,
                SimConfig.defaults());
        assertThat(jcts(r)).containsExactly(10, 11);
        assertThat(r.preemptions()).isZero();
        assertThat(p.bridge().placements()).isEqualTo(2);
    }

    @Test
    void production_lets_a_new_job_take_the_gpus_of_a_well_served_one_by_least_attained_service() {
        // the Muri cluster. A: 0 s, 2,000 s, 64 GPUs; B: 1,000 s, 2 s, 8 GPUs. At 1,000 s A has received 64,000
        // GPU-s and run past the 600 s minimum: it yields (checkpoint, requeue), B runs right after (the pass
        // that follows a preemption), and A resumes when B ends, with its service counted: A ~2,002 s, B ~2 s
        List<TraceJob> t = List.of(job("A", 0, 2000, 64), job("B", 1000, 2, 8));
        Production p = new Production();
        SimResult r = run(t, SimCluster.of(dev.gpucloud.scheduler.sim.cluster.MuriCluster.build(), h -> 0), p,
                SimConfig.defaults());
        double[] jct = jcts(r);
        assertThat(jct[0]).isCloseTo(2002, org.assertj.core.data.Offset.offset(0.01));
        assertThat(jct[1]).isCloseTo(2, org.assertj.core.data.Offset.offset(0.01));
        assertThat(r.preemptions()).isEqualTo(1);
    }

    @Test
    void production_backfills_a_job_that_takes_none_of_the_heads_reservation() {
        // the Muri cluster. A: 0 s, 100 s, 48 GPUs (6 hosts); B: 1 s, 10 s, 24 GPUs: 3 hosts, only 2 free, so B
        // heads the line and holds a reservation for when A ends. C: 2 s, 5 s, 8 GPUs, and D: 3 s, 5 s, 8 GPUs
        // fit the 2 free hosts now, and run there only where they take none of B's reservation: whatever they
        // do, B starts the moment A ends (100..110), so backfill never delays the head
        List<TraceJob> t = List.of(job("A", 0, 100, 48), job("B", 1, 10, 24), job("C", 2, 5, 8), job("D", 3, 5, 8));
        SimResult r = run(t, SimCluster.of(dev.gpucloud.scheduler.sim.cluster.MuriCluster.build(), h -> 0),
                new Production(dev.gpucloud.scheduler.queue.Las.OFF), SimConfig.defaults());
        double[] jct = jcts(r);
        assertThat(jct[0]).isEqualTo(100);
        assertThat(jct[1]).as("B starts when A ends, never later").isEqualTo(109);
        assertThat(r.preemptions()).isZero();
        assertThat(r.jobs()).allMatch(j -> j.state() == SimJob.State.DONE);
    }

    @Test
    void the_policies_through_the_framework_survive_spot_reclaims_on_a_fleet() {
        var spec = dev.gpucloud.scheduler.sim.cluster.FleetSpec.load(
                dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture("fleet-small.csv"));
        var model = spec.build();
        List<TraceJob> t = new java.util.ArrayList<>();
        for (int i = 0; i < 60; i++) {
            t.add(job("j" + i, i * 300, 1_800 + (i * 733) % 7_200, new int[] {1, 1, 2, 4, 8, 16}[i % 6]));
        }
        SimConfig cfg = SimConfig.defaults().withCheckpointInterval(1_800_000).withSpot(1.0, 120_000, 600_000)
                .withOverheads(0, 60_000).withSeed(3);
        for (java.util.function.Supplier<Policy> policy : List.<java.util.function.Supplier<Policy>>of(FineLas::new,
                Production::new)) {
            SimResult r = run(t, SimCluster.of(model, h -> spec.hostType(h.instanceType()).orElseThrow()
                    .priceMicrosPerHour()), policy.get(), cfg);
            assertThat(r.spotInterruptions()).as(policy.get().name()).isPositive();
            assertThat(r.jobs()).as(policy.get().name()).allMatch(j -> j.state() == SimJob.State.DONE);
            SimResult again = run(t, SimCluster.of(model, h -> spec.hostType(h.instanceType()).orElseThrow()
                    .priceMicrosPerHour()), policy.get(), cfg);
            assertThat(again.jctSeconds()).as(policy.get().name() + " is deterministic").containsExactly(r.jctSeconds());
        }
    }

    @Test
    void a_job_the_cluster_can_never_hold_is_refused_by_name() {
        assertThatThrownBy(() -> new Simulator(List.of(job("big", 0, 1, 9)), SimCluster.uniform("h", 2, 4), new Fifo(),
                SimConfig.defaults())).hasMessageContaining("job big needs 9 GPUs");
        assertThatThrownBy(() -> new Simulator(List.of(job("a", 5, 1, 1), job("b", 1, 1, 1)),
                SimCluster.uniform("h", 1, 1), new Fifo(), SimConfig.defaults())).hasMessageContaining("submit order");
    }
}
