package dev.gpucloud.metrics.platform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.events.WorkerPlacement;
import dev.gpucloud.metrics.platform.PlatformState.AdvisorSettings;
import dev.gpucloud.metrics.platform.PlatformState.GpuCount;
import dev.gpucloud.metrics.platform.PlatformState.JobCount;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Not a @QuarkusTest: the platform fold is plain Java, so the test simply calls it. */
class PlatformStateTest {

    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private final Recorded signals = new Recorded();
    private final PlatformState state = new PlatformState(signals, T0, 100,
            new AdvisorSettings(70, Duration.ofMinutes(10), 80));

    static Instant at(int seconds) {
        return T0.plusSeconds(seconds);
    }

    static HostInventory mkHost(String node, String model, int gpus, CapacityType capacity, long priceMicrosPerHour) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, "GPU-" + node + "-" + i, model, 40_960, null, 0, false, List.of()));
        }
        return new HostInventory(node, node, "p4d.24xlarge", "us-east-1a", capacity, priceMicrosPerHour, 96_000,
                1_152_000, "fabric-1", List.of(), devices, List.of(), "simulated", T0);
    }

    static JobEvent mkJob(String job, JobState state, int at, String reason, WorkerPlacement... placement) {
        return new JobEvent(job, "acme", state, reason, at(at), List.of(placement), null);
    }

    static WorkerPlacement on(String node, String allocation, Integer... gpus) {
        return new WorkerPlacement(0, node, List.of(gpus), allocation);
    }

    static TelemetrySample mkSample(String node, int at, double util, long usedMib) {
        List<GpuReading> readings = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            readings.add(new GpuReading(i, "GPU-" + node + "-" + i, "A100", null, util, null, usedMib, 1000 - usedMib,
                    null, null, null, null, null, null, null, null, null, null, null, null, null, List.of()));
        }
        return new TelemetrySample(node, node, at(at), readings);
    }

    /** A job placed on two GPUs of h1 at 60 s after waiting 60 s, running from 70 s. */
    private void runJob() {
        state.describe(mkHost("h1", "A100", 8, CapacityType.SPOT, 8_000_000));
        state.job(mkJob("j1", JobState.PENDING, 0, "waiting for a placement"));
        state.job(mkJob("j1", JobState.SCHEDULED, 60, "placed", on("h1", "a1", 0, 1)));
        state.job(mkJob("j1", JobState.RUNNING, 70, "all workers running", on("h1", "a1", 0, 1)));
    }

    @Nested
    class Jobs {

        @Test
        void unfinished_jobs_are_counted_by_state_and_tenant() {
            runJob();
            state.job(mkJob("j2", JobState.PENDING, 5, "waiting"));

            assertThat(state.jobCounts()).containsExactly(
                    new JobCount(JobState.PENDING, "acme", 1), new JobCount(JobState.RUNNING, "acme", 1));
        }

        @Test
        void the_wait_from_pending_to_scheduled_is_observed_and_the_placement_counted() {
            runJob();

            assertThat(signals.log).containsExactly("queued acme PT1M", "placed acme");
        }

        @Test
        void a_job_released_by_its_dependencies_waits_from_its_release_and_is_no_interruption() {
            state.describe(mkHost("h1", "A100", 8, CapacityType.SPOT, 8_000_000));
            state.job(mkJob("j3", JobState.WAITING_FOR_DEPENDENCIES, 0, "waiting for j1 (RUNNING) to succeed"));
            assertThat(state.jobCounts()).containsExactly(new JobCount(JobState.WAITING_FOR_DEPENDENCIES, "acme", 1));
            state.job(mkJob("j3", JobState.PENDING, 100, "waiting for a placement (j1 ended as asked)"));
            state.job(mkJob("j3", JobState.SCHEDULED, 130, "placed", on("h1", "a3", 0)));

            assertThat(signals.log).containsExactly("queued acme PT30S", "placed acme");
        }

        @Test
        void a_finished_job_leaves_the_counts_and_frees_its_gpus() {
            runJob();
            state.job(mkJob("j1", JobState.SUCCEEDED, 100, "done"));

            assertThat(state.jobCounts()).isEmpty();
            assertThat(state.gpuCounts()).containsExactly(new GpuCount("A100", CapacityType.SPOT, 8, 0, 0));
            assertThat(signals.log).endsWith("finished acme SUCCEEDED");
        }

        @Test
        void an_event_older_than_the_jobs_latest_changes_nothing() {
            runJob();
            state.job(mkJob("j1", JobState.PENDING, 10, "late duplicate"));

            assertThat(state.jobCounts()).containsExactly(new JobCount(JobState.RUNNING, "acme", 1));
        }

        @Test
        void a_replay_of_history_rebuilds_state_but_counts_nothing() {
            PlatformState restarted = new PlatformState(signals, at(1_000), 100, AdvisorSettings.defaults());
            restarted.job(mkJob("j1", JobState.PENDING, 0, "waiting"));
            restarted.job(mkJob("j1", JobState.SCHEDULED, 60, "placed", on("h1", "a1", 0)));

            assertThat(restarted.jobCounts()).containsExactly(new JobCount(JobState.SCHEDULED, "acme", 1));
            assertThat(signals.log).isEmpty();
        }

        @Test
        void jobs_beyond_the_cap_are_refused_and_counted() {
            PlatformState small = new PlatformState(signals, T0, 2, AdvisorSettings.defaults());
            for (int i = 0; i < 5; i++) {
                small.job(mkJob("j" + i, JobState.PENDING, 0, "waiting"));
            }

            assertThat(small.jobsTracked()).isEqualTo(2);
            assertThat(small.jobsRefused()).isEqualTo(3);
        }
    }

    @Nested
    class Interruptions {

        @Test
        void a_spot_requeue_counts_the_gpu_seconds_since_the_last_checkpoint_as_lost() {
            runJob();
            state.allocation(new AllocationEvent("a1", "j1", "h1", AllocationEventType.CHECKPOINT_SAVED, at(100), null,
                    "s3://ckpt/1", null));
            state.job(mkJob("j1", JobState.PENDING, 130, "requeued: spot interruption on h1"));

            // 2 GPUs x 30 s since the checkpoint at 100 s.
            assertThat(signals.log).contains("interrupted acme spot 60.0");
            assertThat(state.gpuCounts()).containsExactly(new GpuCount("A100", CapacityType.SPOT, 8, 0, 0));
        }

        @Test
        void a_lost_worker_without_checkpoint_loses_everything_since_it_started_running() {
            runJob();
            state.job(mkJob("j1", JobState.PENDING, 80, "requeued: a worker was lost"));

            assertThat(signals.log).contains("interrupted acme host_lost 20.0");
        }

        @Test
        void causes_are_read_from_the_reason() {
            assertThat(InterruptionCause.of("preempted by a higher priority")).isEqualTo(InterruptionCause.PREEMPTION);
            assertThat(InterruptionCause.of("spot interruption notice")).isEqualTo(InterruptionCause.SPOT);
            assertThat(InterruptionCause.of("requeued: a worker was lost")).isEqualTo(InterruptionCause.HOST_LOST);
            assertThat(InterruptionCause.of(null)).isEqualTo(InterruptionCause.OTHER);
        }

        @Test
        void node_events_are_counted_with_the_hosts_capacity_type() {
            state.describe(mkHost("h1", "A100", 8, CapacityType.SPOT, 1));
            state.node(new NodeEvent("h1", NodeEventType.SPOT_INTERRUPTION, at(1), at(121), null, null, null));
            state.node(new NodeEvent("ghost", NodeEventType.HEARTBEAT_LOST, at(1), null, null, null, null));

            assertThat(signals.log).containsExactly("node SPOT_INTERRUPTION SPOT", "node HEARTBEAT_LOST null");
        }

        @Test
        void checkpoint_age_is_the_oldest_among_a_tenants_running_jobs() {
            runJob();
            assertThat(state.checkpointAgeSeconds(at(100))).containsEntry("acme", 30.0);

            state.allocation(new AllocationEvent("a1", "j1", "h1", AllocationEventType.CHECKPOINT_SAVED, at(90), null,
                    "s3://ckpt/1", null));
            assertThat(state.checkpointAgeSeconds(at(100))).containsEntry("acme", 10.0);
        }
    }

    @Nested
    class OneShardsHosts {

        /** A fold of the shard that exports h1 only, fed the same streams as every other shard. */
        private final PlatformState shard = new PlatformState(signals, T0, 100,
                new AdvisorSettings(70, Duration.ofMinutes(10), 80), "h1"::equals);

        private void twoJobsOnTwoHosts() {
            shard.describe(mkHost("h1", "A100", 8, CapacityType.SPOT, 8_000_000));
            shard.describe(mkHost("h2", "H100", 8, CapacityType.ON_DEMAND, 16_000_000));
            shard.job(mkJob("j1", JobState.SCHEDULED, 60, "placed", on("h1", "a1", 0, 1)));
            shard.job(mkJob("j2", JobState.SCHEDULED, 60, "placed", on("h2", "a2", 0)));
        }

        @Test
        void the_gpu_rows_cost_and_held_gpus_cover_only_its_own_hosts() {
            twoJobsOnTwoHosts();

            assertThat(shard.gpuCounts()).containsExactly(new GpuCount("A100", CapacityType.SPOT, 8, 2, 0));
            assertThat(shard.costPerHour()).containsExactly(Map.entry("acme", 2.0));
            assertThat(shard.gpuAssignments()).extracting(PlatformState.GpuAssignment::nodeId).containsOnly("h1");
        }

        @Test
        void the_jobs_are_followed_whole_whichever_hosts_they_run_on() {
            twoJobsOnTwoHosts();

            assertThat(shard.jobCounts()).containsExactly(new JobCount(JobState.SCHEDULED, "acme", 2));
        }

        @Test
        void an_advisory_on_another_shards_host_is_not_exported_here() {
            twoJobsOnTwoHosts();
            shard.job(mkJob("j2", JobState.RUNNING, 70, "running", on("h2", "a2", 0)));
            // a host's telemetry reaches only its own shard; were it to arrive here, the advice still stays out
            shard.observe(mkSample("h2", 80, 50, 950));

            assertThat(shard.activeAdvisories()).isEmpty();
        }
    }

    @Nested
    class GpusAndCost {

        @Test
        void gpus_are_counted_by_model_and_capacity_and_allocated_by_placement() {
            runJob();
            state.describe(mkHost("h2", "H100", 8, CapacityType.ON_DEMAND, 98_000_000));

            assertThat(state.gpuCounts()).containsExactly(
                    new GpuCount("A100", CapacityType.SPOT, 8, 2, 0),
                    new GpuCount("H100", CapacityType.ON_DEMAND, 8, 0, 0));
        }

        @Test
        void the_cost_rate_is_the_hosts_list_price_shared_by_its_gpus() {
            runJob();

            // 8 currency units per hour for 8 GPUs: 2 GPUs cost 2 per hour.
            assertThat(state.costPerHour()).containsExactly(Map.entry("acme", 2.0));
        }

        @Test
        void each_gpu_held_is_assigned_to_its_job_and_tenant() {
            runJob();

            assertThat(state.gpuAssignments()).containsExactlyInAnyOrder(
                    new PlatformState.GpuAssignment("h1", 0, "j1", "acme", "a1"),
                    new PlatformState.GpuAssignment("h1", 1, "j1", "acme", "a1"));
        }

        @Test
        void repeated_or_overlapping_usage_counts_once() {
            Sku half = new Sku("A100", null, 500);
            state.usage(new UsageEvent("a1", "j1", "acme", "h1", at(0), at(60), half, 2, CapacityType.SPOT, "z"));
            state.usage(new UsageEvent("a1", "j1", "acme", "h1", at(0), at(60), half, 2, CapacityType.SPOT, "z"));
            state.usage(new UsageEvent("a1", "j1", "acme", "h1", at(30), at(90), half, 2, CapacityType.SPOT, "z"));

            // 2 x half a GPU for 60 s, then the 30 s that were new.
            assertThat(signals.log).containsExactly("used acme SPOT 60.0", "used acme SPOT 30.0");
        }
    }

    @Nested
    class Advice {

        @Test
        void gpus_under_the_threshold_for_the_whole_window_raise_one_idle_advisory() {
            runJob();
            state.observe(mkSample("h1", 100, 20, 100));
            state.observe(mkSample("h1", 400, 30, 100));
            assertThat(state.activeAdvisories()).isEmpty();

            state.observe(mkSample("h1", 700, 25, 100));
            state.observe(mkSample("h1", 760, 25, 100));

            assertThat(signals.advisories).hasSize(1);
            Advisory idle = signals.advisories.get(0);
            assertThat(idle.kind()).isEqualTo(Advisory.Kind.IDLE);
            assertThat(idle.allocationId()).isEqualTo("a1");
            assertThat(idle.since()).isEqualTo(at(100));
            assertThat(state.gpuCounts()).containsExactly(new GpuCount("A100", CapacityType.SPOT, 8, 2, 2));
        }

        @Test
        void a_busy_sample_restarts_the_window_and_clears_the_advisory() {
            runJob();
            state.observe(mkSample("h1", 100, 20, 100));
            state.observe(mkSample("h1", 500, 90, 100));
            state.observe(mkSample("h1", 800, 20, 100));
            assertThat(state.activeAdvisories()).isEmpty();

            state.observe(mkSample("h1", 1_400, 20, 100));
            assertThat(state.activeAdvisories()).extracting(Advisory::kind).containsExactly(Advisory.Kind.IDLE);

            state.observe(mkSample("h1", 1_460, 95, 100));
            assertThat(state.activeAdvisories()).isEmpty();
        }

        @Test
        void memory_use_past_the_threshold_raises_a_pressure_advisory_once() {
            runJob();
            state.observe(mkSample("h1", 100, 95, 850));
            state.observe(mkSample("h1", 110, 95, 900));

            assertThat(signals.advisories).extracting(Advisory::kind).containsExactly(Advisory.Kind.MEMORY_PRESSURE);
            assertThat(signals.advisories.get(0).value()).isEqualTo(85.0);

            state.observe(mkSample("h1", 120, 95, 500));
            assertThat(state.activeAdvisories()).isEmpty();
        }

        @Test
        void a_job_not_yet_running_gets_no_advice() {
            state.describe(mkHost("h1", "A100", 8, CapacityType.SPOT, 8_000_000));
            state.job(mkJob("j1", JobState.SCHEDULED, 0, "placed", on("h1", "a1", 0, 1)));
            state.observe(mkSample("h1", 100, 0, 990));
            state.observe(mkSample("h1", 1_000, 0, 990));

            assertThat(signals.advisories).isEmpty();
        }

        @Test
        void settings_out_of_range_are_refused_naming_the_setting() {
            assertThatThrownBy(() -> new AdvisorSettings(0, Duration.ofMinutes(1), 80))
                    .hasMessageContaining("idleBelowPercent");
            assertThatThrownBy(() -> new AdvisorSettings(70, Duration.ofMinutes(1), 120))
                    .hasMessageContaining("memoryPressurePercent");
        }
    }

    /** Writes each signal as a line, so cases read like the spec. */
    static final class Recorded implements PlatformSignals {
        final List<String> log = new ArrayList<>();
        final List<Advisory> advisories = new ArrayList<>();

        @Override
        public void queued(String tenant, Duration wait) {
            log.add("queued " + tenant + " " + wait);
        }

        @Override
        public void placed(String tenant) {
            log.add("placed " + tenant);
        }

        @Override
        public void interrupted(String tenant, InterruptionCause cause, double lostGpuSeconds) {
            log.add("interrupted " + tenant + " " + cause.label() + " " + lostGpuSeconds);
        }

        @Override
        public void finished(String tenant, JobState state) {
            log.add("finished " + tenant + " " + state);
        }

        @Override
        public void nodeEvent(NodeEventType type, CapacityType capacityType) {
            log.add("node " + type + " " + capacityType);
        }

        @Override
        public void allocationLost() {
            log.add("allocation lost");
        }

        @Override
        public void used(String tenant, CapacityType capacityType, double gpuSeconds) {
            log.add("used " + tenant + " " + capacityType + " " + gpuSeconds);
        }

        @Override
        public void advised(Advisory advisory) {
            advisories.add(advisory);
        }
    }
}
