package dev.gpucloud.scheduler.sim.elastic;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.scheduler.sim.trace.PhillyTraceLoader;
import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The elastic fleet on a dozen jobs in two bursts six hours apart; plain JUnit on the virtual clock. */
class ElasticFleetTest {

    private static final long HOUR = 3_600_000;

    private static List<TraceJob> twoBursts() {
        return PhillyTraceLoader.load(fixture("elastic-small.csv")).items();
    }

    /** No reclaims: the behaviour of scale-out and scale-in alone. */
    private static ElasticSettings calm() {
        return ElasticSettings.defaults().withInterruptions(0).withSampleEvery(Duration.ofSeconds(30));
    }

    private static FleetResult peakFleet(List<TraceJob> jobs, ElasticSettings s) {
        Demand d = Demand.of(jobs);
        return FleetSimulation.fixed("t", "static-peak", jobs, d.hostsFor(d.peakGpus(), 8), s, null);
    }

    @Test
    void hosts_are_launched_once_the_first_job_arrives_and_take_work_after_the_boot_delay() {
        TimeSeries series = new TimeSeries();
        FleetResult r = FleetSimulation.elastic("t", twoBursts(), calm(), series);
        TimeSeries.Row first = series.rows().get(0);
        assertThat(first.seconds()).isZero();
        assertThat(first.launching()).isPositive();
        assertThat(first.running()).isZero();
        assertThat(series.rows()).filteredOn(row -> row.seconds() < 60).allSatisfy(row -> assertThat(row.runningJobs()).isZero());
        assertThat(series.rows()).filteredOn(row -> row.seconds() == 60).first()
                .satisfies(row -> assertThat(row.runningJobs()).isPositive());
        assertThat(r.launches()).isPositive();
    }

    @Test
    void every_job_runs_to_completion_no_sooner_than_its_duration() {
        List<TraceJob> jobs = twoBursts();
        FleetResult r = FleetSimulation.elastic("t", jobs, calm(), null);
        assertThat(r.jobs()).isEqualTo(12);
        double meanDuration = jobs.stream().mapToDouble(TraceJob::durationSeconds).average().orElseThrow();
        assertThat(r.avgJctSeconds()).isGreaterThanOrEqualTo(meanDuration);
        // boot (60 s) plus at most a scan or two of waiting per job
        assertThat(r.avgJctSeconds()).isLessThan(meanDuration + 300);
    }

    @Test
    void idle_hosts_are_released_after_the_idle_timeout_between_the_bursts() {
        TimeSeries series = new TimeSeries();
        FleetResult r = FleetSimulation.elastic("t", twoBursts(), calm(), series);
        // the first burst's last job ends 00:05 + 1 h (the 8-GPU job started ~00:05, 3,000 s; the 1-GPU job 3,600 s)
        List<TimeSeries.Row> gap = series.rows().stream()
                .filter(row -> row.seconds() > 3 * 3600 && row.seconds() < 6 * 3600).toList();
        assertThat(gap).isNotEmpty().allSatisfy(row -> {
            assertThat(row.launching() + row.running() + row.draining()).isZero();
            assertThat(row.usdPerHour()).isZero();
        });
        long lastBusy = series.rows().stream().filter(row -> row.seconds() < 3 * 3600 && row.runningJobs() > 0)
                .mapToLong(row -> (long) row.seconds()).max().orElseThrow();
        long firstEmpty = series.rows().stream().filter(row -> row.seconds() > lastBusy && row.fleetGpus() == 0)
                .mapToLong(row -> (long) row.seconds()).min().orElseThrow();
        assertThat(firstEmpty - lastBusy).isGreaterThanOrEqualTo(Duration.ofMinutes(10).toSeconds() - 30);
        assertThat(r.releases()).isEqualTo(r.launches());
    }

    @Test
    void the_elastic_fleet_costs_less_than_the_fleet_sized_for_the_peak() {
        List<TraceJob> jobs = twoBursts();
        FleetResult elastic = FleetSimulation.elastic("t", jobs, calm(), null);
        FleetResult peak = peakFleet(jobs, calm());
        assertThat(elastic.costUsd()).isPositive().isLessThan(peak.costUsd() * 0.5);
        assertThat(elastic.idleShare()).isLessThan(peak.idleShare());
        assertThat(peak.jobs()).isEqualTo(12);
    }

    @Test
    void a_reclaimed_job_is_requeued_and_resumes_from_its_last_checkpoint() {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            jobs.add(TraceJob.of("long-" + i, i * 60_000L, 10 * HOUR, 8, "a"));
        }
        ElasticSettings s = ElasticSettings.defaults().withInterruptions(1.0).withNonCheckpointable(0)
                .withCheckpoints(Duration.ofMinutes(30), Duration.ofSeconds(30));
        FleetResult r = FleetSimulation.elastic("t", jobs, s, null);
        assertThat(r.interruptions()).isPositive();
        assertThat(r.requeues()).isGreaterThanOrEqualTo(r.interruptions());
        assertThat(r.jobs()).isEqualTo(4);
        // each reclaim loses at most one checkpoint interval of an 8-GPU job's work
        assertThat(r.lostGpuHours()).isPositive().isLessThanOrEqualTo(r.interruptions() * 8 * 0.5);
        // had they restarted from scratch, ten reclaims an hour would leave no 10-hour job done
        assertThat(r.avgJctSeconds()).isGreaterThan(10 * 3600);
    }

    @Test
    void a_job_that_cannot_be_checkpointed_never_runs_on_spot_and_is_never_reclaimed() {
        List<TraceJob> jobs = List.of(TraceJob.of("a", 0, 10 * HOUR, 8, "a"), TraceJob.of("b", 0, 10 * HOUR, 1, "a"));
        ElasticSettings s = ElasticSettings.defaults().withInterruptions(5.0).withNonCheckpointable(1.0);
        FleetResult r = FleetSimulation.elastic("t", jobs, s, null);
        assertThat(r.interruptions()).isZero();
        assertThat(r.requeues()).isZero();
        assertThat(r.avgJctSeconds()).isLessThan(10 * 3600 + 300);
    }

    @Test
    void a_zone_out_of_spot_capacity_is_made_up_on_demand_and_the_jobs_still_run() {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            jobs.add(TraceJob.of("j" + i, 0, HOUR, 8, "a"));
        }
        ElasticSettings s = new ElasticSettings(Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofMinutes(10),
                0.70, Duration.ofMinutes(30), Duration.ofSeconds(30), 0, 42, 0, 8, Duration.ofMinutes(10));
        FleetResult r = FleetSimulation.elastic("t", jobs, s, null);
        // three zones of 8 spot GPUs: three 8-GPU spot hosts, the other three on demand
        assertThat(r.spotShortfall()).isEqualTo(3);
        assertThat(r.launches()).isEqualTo(6);
        assertThat(r.avgJctSeconds()).isLessThan(3600 + 300);
    }

    @Test
    void a_gang_of_sixteen_gpus_runs_on_two_hosts_of_one_placement_group() {
        FleetJob j = new FleetJob(TraceJob.of("g", 0, HOUR, 16, "a"), true);
        assertThat(j.workers).isEqualTo(2);
        assertThat(j.gpusPerWorker).isEqualTo(8);
        FleetJob twelve = new FleetJob(TraceJob.of("t", 0, HOUR, 12, "a"), true);
        assertThat(twelve.workers * twelve.gpusPerWorker).isEqualTo(12);
        assertThat(twelve.gpusPerWorker).isLessThanOrEqualTo(8);
        FleetResult r = FleetSimulation.elastic("t", List.of(TraceJob.of("g", 0, HOUR, 16, "a")), calm(), null);
        assertThat(r.jobs()).isEqualTo(1);
        assertThat(r.launches()).isEqualTo(2);
    }

    @Test
    void demand_peaks_where_most_jobs_overlap_and_sizes_at_least_the_largest_job() {
        Demand d = Demand.of(List.of(TraceJob.of("a", 0, HOUR, 4, "x"), TraceJob.of("b", HOUR / 2, HOUR, 8, "x"),
                TraceJob.of("c", HOUR, HOUR, 2, "x")));
        assertThat(d.peakGpus()).isEqualTo(12);
        assertThat(d.meanGpus()).isEqualTo((4.0 + 8 + 2) / 2);
        assertThat(d.hostsFor(d.meanGpus(), 8)).isEqualTo(1);
        assertThat(Demand.of(List.of(TraceJob.of("big", 0, HOUR, 32, "x"))).hostsFor(1, 8)).isEqualTo(4);
    }
}
