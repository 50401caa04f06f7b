package dev.gpucloud.metrics.gpu;

import static dev.gpucloud.metrics.gpu.Fixtures.T0;
import static dev.gpucloud.metrics.gpu.Fixtures.at;
import static dev.gpucloud.metrics.gpu.Fixtures.mkBareReading;
import static dev.gpucloud.metrics.gpu.Fixtures.mkInventory;
import static dev.gpucloud.metrics.gpu.Fixtures.mkReading;
import static dev.gpucloud.metrics.gpu.Fixtures.mkSample;
import static dev.gpucloud.metrics.gpu.Fixtures.uuid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.metrics.gpu.GpuFleet.SampleOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Not a @QuarkusTest: the fleet is plain Java, so the test simply calls it. */
class GpuFleetTest {

    private static final int ALL_FIELDS = GpuField.values().length;
    private static final Duration STALE_AFTER = Duration.ofMinutes(5);

    private final Fixtures.RecordingListener series = new Fixtures.RecordingListener();
    private final GpuFleet fleet = new GpuFleet(series, 8, 20);

    private double value(String host, int index, GpuField field) {
        return fleet.gpu(uuid(host, index)).orElseThrow().value(field);
    }

    @Nested
    class Samples {

        @Test
        void a_first_sample_creates_every_measured_series_of_every_gpu() {
            SampleOutcome outcome = fleet.apply(mkSample("h1", at(1), 2, 87.0), at(1));

            assertThat(outcome).isEqualTo(SampleOutcome.HOST_STARTED_REPORTING);
            assertThat(series.countFor("h1")).isEqualTo(2L * ALL_FIELDS);
            assertThat(value("h1", 0, GpuField.GPU_UTIL)).isEqualTo(87.0);
            assertThat(value("h1", 0, GpuField.FB_USED)).isEqualTo(1024.0);
            assertThat(value("h1", 0, GpuField.FB_FREE)).isEqualTo(39_936.0);
            assertThat(value("h1", 0, GpuField.POWER_USAGE)).isEqualTo(250.5);
            assertThat(value("h1", 0, GpuField.TOTAL_ENERGY_CONSUMPTION)).isEqualTo(9_000_000.0);
            assertThat(value("h1", 0, GpuField.GPU_TEMP)).isEqualTo(55.0);
            assertThat(value("h1", 0, GpuField.SM_CLOCK)).isEqualTo(1410.0);
            assertThat(value("h1", 0, GpuField.MEM_CLOCK)).isEqualTo(1215.0);
            assertThat(value("h1", 0, GpuField.MEM_COPY_UTIL)).isEqualTo(12.5);
        }

        @Test
        void readings_the_backend_could_not_take_have_no_series() {
            fleet.apply(mkSample("h1", at(1), mkBareReading("h1", 0, 10)), at(1));

            assertThat(series.series).containsExactly(
                    "DCGM_FI_DEV_FB_FREE{GPU-h1-0}", "DCGM_FI_DEV_FB_USED{GPU-h1-0}", "DCGM_FI_DEV_GPU_UTIL{GPU-h1-0}");
        }

        @Test
        void a_reading_that_appears_or_disappears_adds_or_removes_its_series() {
            fleet.apply(mkSample("h1", at(1), mkBareReading("h1", 0, 10)), at(1));
            fleet.apply(mkSample("h1", at(2), mkReading("h1", 0, 10)), at(2));
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);

            fleet.apply(mkSample("h1", at(3), mkBareReading("h1", 0, 10)), at(3));
            assertThat(series.countFor("h1")).isEqualTo(3);
        }

        @Test
        void a_newer_sample_updates_values_without_touching_the_series() {
            fleet.apply(mkSample("h1", at(1), 1, 10.0), at(1));
            int added = series.added;

            SampleOutcome outcome = fleet.apply(mkSample("h1", at(2), 1, 95.0), at(2));

            assertThat(outcome).isEqualTo(SampleOutcome.APPLIED);
            assertThat(value("h1", 0, GpuField.GPU_UTIL)).isEqualTo(95.0);
            assertThat(series.added).isEqualTo(added);
            assertThat(series.removed).isZero();
        }

        @Test
        void an_older_sample_does_not_go_backwards() {
            fleet.apply(mkSample("h1", at(10), 1, 50.0), at(10));

            SampleOutcome outcome = fleet.apply(mkSample("h1", at(5), 1, 5.0), at(11));

            assertThat(outcome).isEqualTo(SampleOutcome.NOT_NEWER);
            assertThat(value("h1", 0, GpuField.GPU_UTIL)).isEqualTo(50.0);
        }

        @Test
        void a_repeated_sample_is_not_newer() {
            TelemetrySample sample = mkSample("h1", at(10), 1, 50.0);
            fleet.apply(sample, at(10));

            assertThat(fleet.apply(sample, at(11))).isEqualTo(SampleOutcome.NOT_NEWER);
        }

        @Test
        void a_gpu_missing_from_a_newer_sample_loses_its_series() {
            fleet.apply(mkSample("h1", at(1), 2, 10.0), at(1));

            fleet.apply(mkSample("h1", at(2), mkReading("h1", 0, 10.0)), at(2));

            assertThat(fleet.gpu(uuid("h1", 1))).isEmpty();
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void a_gpu_whose_labels_change_gets_new_series_under_the_new_labels() {
            fleet.apply(mkSample("h1", at(1), 1, 10.0), at(1));
            GpuSeries before = fleet.gpu(uuid("h1", 0)).orElseThrow();

            fleet.apply(new TelemetrySample("h1", "renamed.example", at(2), List.of(mkReading("h1", 0, 10.0))), at(2));

            GpuSeries after = fleet.gpu(uuid("h1", 0)).orElseThrow();
            assertThat(after).isNotSameAs(before);
            assertThat(after.labels().hostname()).isEqualTo("renamed.example");
            assertThat(series.removed).isEqualTo(ALL_FIELDS);
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void a_gpu_reported_by_another_host_moves_there() {
            fleet.apply(mkSample("h1", at(1), mkReading("h1", 0, 10.0)), at(1));

            fleet.apply(new TelemetrySample("h2", "h2.example", at(2), List.of(mkReading("h1", 0, 20.0))), at(2));

            assertThat(fleet.gpu(uuid("h1", 0)).orElseThrow().nodeId()).isEqualTo("h2");
            assertThat(fleet.gpusOf("h1")).isEmpty();
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void labels_follow_dcgm_exporter() {
            fleet.apply(mkSample("h1", at(1), mkReading("h1", 3, 10.0)), at(1));

            assertThat(fleet.gpu(uuid("h1", 3)).orElseThrow().labels()).isEqualTo(new GpuLabels(
                    "3", "GPU-h1-3", "nvidia3", "A100-SXM4-40GB", "h1.example", "00000000:03:00.0"));
        }

        @Test
        void a_pci_bus_id_missing_from_telemetry_comes_from_the_inventory() {
            fleet.describe(mkInventory("h1", 1), at(0));

            fleet.apply(mkSample("h1", at(1), mkBareReading("h1", 0, 10.0)), at(1));

            assertThat(fleet.gpu(uuid("h1", 0)).orElseThrow().labels().pciBusId()).isEqualTo("00000000:10:00.0");
        }

        @Test
        void a_pci_bus_id_known_nowhere_is_an_empty_label() {
            fleet.apply(mkSample("h1", at(1), mkBareReading("h1", 0, 10.0)), at(1));

            assertThat(fleet.gpu(uuid("h1", 0)).orElseThrow().labels().pciBusId()).isEmpty();
        }
    }

    @Nested
    class HostileSamples {

        @Test
        void a_sample_over_the_per_host_limit_is_rejected_and_changes_nothing() {
            assertThatThrownBy(() -> fleet.apply(mkSample("h1", at(1), 9, 10.0), at(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("field 'gpus' lists 9 GPUs, over the limit of 8 per host");
            assertThat(series.series).isEmpty();
        }

        @Test
        void a_sample_listing_a_uuid_twice_is_rejected() {
            fleet.apply(mkSample("h1", at(1), 1, 10.0), at(1));
            var twice = mkSample("h1", at(2), mkReading("h1", 0, 10.0), mkReading("h1", 0, 10.0));

            assertThatThrownBy(() -> fleet.apply(twice, at(2)))
                    .hasMessage("field 'gpus' lists uuid GPU-h1-0 twice");
            assertThat(value("h1", 0, GpuField.GPU_UTIL)).isEqualTo(10.0);
        }

        @Test
        void a_sample_listing_an_index_twice_is_rejected() {
            var reading = mkReading("h1", 0, 10.0);
            var sameIndex = new dev.gpucloud.contracts.events.GpuReading(0, "GPU-other", "A100-SXM4-40GB", null,
                    1.0, null, 1, 1, null, null, null, null, null, null, null, null, null, null, null, null, null, null);

            assertThatThrownBy(() -> fleet.apply(mkSample("h1", at(1), reading, sameIndex), at(1)))
                    .hasMessage("field 'gpus' lists index 0 twice");
        }

        @Test
        void a_sample_that_would_exceed_the_fleet_limit_is_rejected() {
            for (int h = 0; h < 5; h++) {
                fleet.apply(mkSample("h" + h, at(1), 4, 10.0), at(1));
            }
            assertThat(fleet.gpuCount()).isEqualTo(20);

            assertThatThrownBy(() -> fleet.apply(mkSample("h9", at(1), 1, 10.0), at(1)))
                    .hasMessage("field 'gpus' adds 1 GPUs to the 20 already exported, over the limit of 20");
            // Hosts already exported go on.
            assertThat(fleet.apply(mkSample("h0", at(2), 4, 20.0), at(2))).isEqualTo(SampleOutcome.APPLIED);
        }
    }

    /** MIG instances: a child series set per instance, gone when the instance or its GPU goes. */
    @Nested
    class MigInstances {

        private dev.gpucloud.contracts.events.GpuReading withMig(String host, dev.gpucloud.contracts.events.MigReading... migs) {
            return new dev.gpucloud.contracts.events.GpuReading(0, uuid(host, 0), "H100-SXM5-80GB", null, 10.0, null,
                    1024, 39_936, null, null, null, null, null, null, null, null, null, null, null, null, null,
                    List.of(migs));
        }

        private dev.gpucloud.contracts.events.MigReading mig(int id, String profile, long usedMib) {
            return new dev.gpucloud.contracts.events.MigReading(id, profile, "MIG-" + id, usedMib, 0.5);
        }

        @Test
        void each_instance_gets_the_framebuffer_and_engine_series() {
            fleet.apply(mkSample("h1", at(1), withMig("h1", mig(1, "1g.10gb", 100), mig(2, "1g.10gb", 200))), at(1));

            // 3 whole-GPU series (util, used, free) plus 2 per instance.
            assertThat(series.added).isEqualTo(3 + 2 * 2);
            GpuSeries gpu = fleet.gpu(uuid("h1", 0)).orElseThrow();
            assertThat(gpu.migInstance(2).orElseThrow().value(GpuField.FB_USED)).isEqualTo(200.0);
            assertThat(gpu.migInstance(2).orElseThrow().labels().migProfile()).isEqualTo("1g.10gb");
            assertThat(gpu.migInstance(2).orElseThrow().labels().uuid()).isEqualTo(uuid("h1", 0));
        }

        @Test
        void an_instance_missing_from_a_newer_sample_or_repartitioned_loses_its_series() {
            fleet.apply(mkSample("h1", at(1), withMig("h1", mig(1, "1g.10gb", 100), mig(2, "1g.10gb", 200))), at(1));
            fleet.apply(mkSample("h1", at(2), withMig("h1", mig(1, "3g.40gb", 100))), at(2));

            GpuSeries gpu = fleet.gpu(uuid("h1", 0)).orElseThrow();
            assertThat(gpu.migInstance(2)).isEmpty();
            assertThat(gpu.migInstance(1).orElseThrow().labels().migProfile()).isEqualTo("3g.40gb");
            assertThat(series.added - series.removed).isEqualTo(3 + 2);
        }

        @Test
        void a_departing_host_takes_its_instances_series_with_it() {
            fleet.apply(mkSample("h1", at(1), withMig("h1", mig(1, "1g.10gb", 100))), at(1));
            fleet.leave("h1", at(2), at(2));

            assertThat(series.series).isEmpty();
        }
    }

    /** Bad values and made-up GPUs: dropped, and every drop counted with its reason. */
    @Nested
    class ImplausibleTelemetry {

        private final List<String> drops = new java.util.ArrayList<>();
        private final GpuFleet counted = new GpuFleet(series, (reason, what) -> drops.add(reason.label() + ":" + what),
                8, 20);

        private static dev.gpucloud.contracts.events.GpuReading hostile(String host, int index, double power,
                Integer temperature, Double tensor) {
            return new dev.gpucloud.contracts.events.GpuReading(index, uuid(host, index), "A100-SXM4-40GB", null,
                    50.0, null, 1024, 39_936, power, null, temperature, null, null, null,
                    null, null, null, null, null, tensor, null, List.of());
        }

        @Test
        void negative_infinite_or_absurd_readings_get_no_series_and_are_counted() {
            counted.apply(mkSample("h1", at(1), hostile("h1", 0, -20.0, 4_000, 1.5)), at(1));
            counted.apply(mkSample("h2", at(1), hostile("h2", 0, Double.POSITIVE_INFINITY, -3, Double.NaN)), at(1));

            assertThat(series.series).doesNotContain("DCGM_FI_DEV_POWER_USAGE{GPU-h1-0}",
                    "DCGM_FI_DEV_GPU_TEMP{GPU-h1-0}", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{GPU-h1-0}",
                    "DCGM_FI_DEV_POWER_USAGE{GPU-h2-0}", "DCGM_FI_DEV_GPU_TEMP{GPU-h2-0}");
            assertThat(series.series).contains("DCGM_FI_DEV_GPU_UTIL{GPU-h1-0}", "DCGM_FI_DEV_GPU_UTIL{GPU-h2-0}");
            // NaN is "no reading" (absent), not a bad one: only the real values out of range count.
            assertThat(drops).containsExactly(
                    "implausible_value:DCGM_FI_DEV_POWER_USAGE", "implausible_value:DCGM_FI_DEV_GPU_TEMP",
                    "implausible_value:DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                    "implausible_value:DCGM_FI_DEV_POWER_USAGE", "implausible_value:DCGM_FI_DEV_GPU_TEMP");
        }

        @Test
        void a_reading_that_turns_absurd_loses_its_series_until_it_is_plausible_again() {
            counted.apply(mkSample("h1", at(1), hostile("h1", 0, 300.0, 60, 0.5)), at(1));
            counted.apply(mkSample("h1", at(2), hostile("h1", 0, 300.0, 9_999, 0.5)), at(2));
            assertThat(series.series).doesNotContain("DCGM_FI_DEV_GPU_TEMP{GPU-h1-0}");

            counted.apply(mkSample("h1", at(3), hostile("h1", 0, 300.0, 61, 0.5)), at(3));
            assertThat(series.series).contains("DCGM_FI_DEV_GPU_TEMP{GPU-h1-0}");
            assertThat(counted.gpu(uuid("h1", 0)).orElseThrow().value(GpuField.GPU_TEMP)).isEqualTo(61.0);
        }

        @Test
        void a_gpu_the_hosts_inventory_does_not_list_is_skipped_and_counted() {
            counted.describe(mkInventory("h1", 2), at(0));
            var madeUp = new dev.gpucloud.contracts.events.GpuReading(2, "GPU-made-up", "A100-SXM4-40GB", null,
                    1.0, null, 1, 1, null, null, null, null, null, null, null, null, null, null, null, null, null, null);

            counted.apply(mkSample("h1", at(1), mkReading("h1", 0, 10.0), mkReading("h1", 1, 10.0), madeUp), at(1));

            assertThat(counted.gpuCount()).isEqualTo(2);
            assertThat(counted.gpu("GPU-made-up")).isEmpty();
            assertThat(drops).containsExactly("unknown_gpu:gpu");
        }

        @Test
        void a_host_without_inventory_yet_is_trusted() {
            counted.apply(mkSample("h1", at(1), 2, 10.0), at(1));

            assertThat(counted.gpuCount()).isEqualTo(2);
            assertThat(drops).isEmpty();
        }

        @Test
        void a_flood_of_hosts_stops_at_the_series_cap_and_says_so() {
            for (int h = 0; h < 30; h++) {
                try {
                    counted.apply(mkSample("flood-" + h, at(1), 1, 10.0), at(1));
                } catch (IllegalArgumentException expected) {
                    // dead-lettered by the consumer
                }
            }

            assertThat(counted.gpuCount()).isEqualTo(20);
            assertThat(drops).hasSize(10).containsOnly("series_cap:sample");
        }

        @Test
        void stale_and_oversized_samples_are_counted() {
            counted.apply(mkSample("h1", at(5), 1, 10.0), at(5));
            counted.apply(mkSample("h1", at(4), 1, 10.0), at(5));
            assertThatThrownBy(() -> counted.apply(mkSample("h2", at(1), 9, 10.0), at(1)));

            assertThat(drops).containsExactly("stale_sample:sample", "gpus_per_host:sample");
        }
    }

    @Nested
    class Departures {

        @Test
        void a_tombstone_removes_every_series_of_the_host_and_only_its() {
            fleet.describe(mkInventory("h1", 2), at(0));
            fleet.apply(mkSample("h1", at(1), 2, 10.0), at(1));
            fleet.apply(mkSample("h2", at(1), 1, 10.0), at(1));

            GpuFleet.Departure departure = fleet.leave("h1", at(2), at(2));

            assertThat(departure).isEqualTo(new GpuFleet.Departure(true, 2));
            assertThat(series.countFor("h1")).isZero();
            assertThat(series.countFor("h2")).isEqualTo(ALL_FIELDS);
            assertThat(fleet.isDescribed("h1")).isFalse();
        }

        @Test
        void a_tombstone_for_a_host_never_seen_is_harmless() {
            assertThat(fleet.leave("ghost", at(2), at(2))).isEqualTo(new GpuFleet.Departure(false, 0));
        }

        @Test
        void a_sample_taken_before_the_departure_does_not_bring_the_host_back() {
            fleet.apply(mkSample("h1", at(1), 1, 10.0), at(1));
            fleet.leave("h1", at(5), at(5));

            assertThat(fleet.apply(mkSample("h1", at(4), 1, 10.0), at(6))).isEqualTo(SampleOutcome.BEFORE_DEPARTURE);
            assertThat(series.series).isEmpty();
        }

        @Test
        void a_host_that_comes_back_reports_again() {
            fleet.apply(mkSample("h1", at(1), 1, 10.0), at(1));
            fleet.leave("h1", at(5), at(5));

            assertThat(fleet.describe(mkInventory("h1", 1), at(6))).isEqualTo(GpuFleet.HostChange.APPEARED);
            assertThat(fleet.apply(mkSample("h1", at(7), 1, 10.0), at(7)))
                    .isEqualTo(SampleOutcome.HOST_STARTED_REPORTING);
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void a_second_description_is_an_update() {
            assertThat(fleet.describe(mkInventory("h1", 1), at(0))).isEqualTo(GpuFleet.HostChange.APPEARED);
            assertThat(fleet.describe(mkInventory("h1", 1), at(1))).isEqualTo(GpuFleet.HostChange.UPDATED);
        }
    }

    @Nested
    class Staleness {

        @Test
        void a_host_quiet_for_stale_after_loses_its_series() {
            fleet.apply(mkSample("h1", at(0), 1, 10.0), T0);
            fleet.apply(mkSample("h2", at(200), 1, 10.0), T0.plusSeconds(200));

            List<String> expired = fleet.expire(T0.plus(STALE_AFTER), STALE_AFTER);

            assertThat(expired).containsExactly("h1");
            assertThat(series.countFor("h1")).isZero();
            assertThat(series.countFor("h2")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void a_host_heard_within_stale_after_keeps_its_series() {
            fleet.apply(mkSample("h1", at(0), 1, 10.0), T0);

            assertThat(fleet.expire(T0.plus(STALE_AFTER).minusMillis(1), STALE_AFTER)).isEmpty();
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void staleness_follows_arrival_time_not_the_hosts_clock() {
            // The host's clock is an hour behind; its samples arrive now.
            fleet.apply(mkSample("h1", T0.minusSeconds(3600), 1, 10.0), T0);

            assertThat(fleet.expire(T0.plusSeconds(60), STALE_AFTER)).isEmpty();
        }

        @Test
        void a_stale_host_that_reports_again_gets_its_series_back() {
            fleet.apply(mkSample("h1", at(0), 1, 10.0), T0);
            fleet.expire(T0.plus(STALE_AFTER), STALE_AFTER);

            assertThat(fleet.apply(mkSample("h1", at(400), 1, 10.0), at(400)))
                    .isEqualTo(SampleOutcome.HOST_STARTED_REPORTING);
            assertThat(series.countFor("h1")).isEqualTo(ALL_FIELDS);
        }

        @Test
        void a_departed_host_is_forgotten_after_stale_after() {
            fleet.leave("h1", at(5), T0);
            fleet.expire(T0.plus(STALE_AFTER), STALE_AFTER);

            // Forgotten: the departure no longer screens out older samples.
            assertThat(fleet.apply(mkSample("h1", at(4), 1, 10.0), at(400)))
                    .isEqualTo(SampleOutcome.HOST_STARTED_REPORTING);
        }
    }

    @Nested
    class Sample_rules {
        private final List<String> drops = new ArrayList<>();
        private final GpuFleet strict = new GpuFleet(series, (reason, what) -> drops.add(reason.label() + ":" + what),
                8, 20, new SampleRules(Duration.ofMinutes(5), Duration.ofMinutes(10), true));

        @Test
        void a_sample_far_ahead_is_dropped_and_does_not_freeze_the_host() {
            strict.describe(mkInventory("h1", 1), at(0));
            assertThat(strict.apply(mkSample("h1", at(1).plus(Duration.ofDays(1)), 1, 10.0), at(1)))
                    .isEqualTo(GpuFleet.SampleOutcome.NOT_BELIEVED);
            assertThat(strict.apply(mkSample("h1", at(2), 1, 20.0), at(2)))
                    .isEqualTo(GpuFleet.SampleOutcome.HOST_STARTED_REPORTING);
            assertThat(drops).containsExactly("future_sample:sample");
        }

        @Test
        void a_sample_from_long_ago_is_dropped() {
            strict.describe(mkInventory("h1", 1), at(0));
            assertThat(strict.apply(mkSample("h1", at(0), 1, 10.0), at(0).plus(Duration.ofHours(1))))
                    .isEqualTo(GpuFleet.SampleOutcome.NOT_BELIEVED);
            assertThat(drops).containsExactly("old_sample:sample");
        }

        @Test
        void label_values_are_clipped_to_the_documented_length() {
            GpuLabels labels = new GpuLabels("0", "GPU-1", "nvidia0", "M".repeat(60_000), "h".repeat(300), null);
            assertThat(labels.modelName()).hasSize(GpuLabels.MAX_VALUE);
            assertThat(labels.hostname()).hasSize(GpuLabels.MAX_VALUE);
        }

        @Test
        void a_host_not_in_the_inventory_gets_no_series() {
            assertThat(strict.apply(mkSample("ghost", at(1), 1, 10.0), at(1)))
                    .isEqualTo(GpuFleet.SampleOutcome.NOT_BELIEVED);
            assertThat(strict.gpuCount()).isZero();
            assertThat(drops).containsExactly("unknown_host:sample");
        }
    }
}
