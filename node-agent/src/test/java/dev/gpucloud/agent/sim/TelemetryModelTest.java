package dev.gpucloud.agent.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TelemetryModelTest {

    private static final Instant T0 = Instant.parse("2025-03-01T12:00:00Z");

    private static List<TelemetrySample> history(long seed, int samples) {
        MutableClock clock = new MutableClock(T0);
        SimulationSettings settings = SimulationSettings.defaults();
        SimulatedFleet fleet = new SimulatedFleet(new SimulationSettings(settings.fleet(), "sim", "local-1a", seed,
                settings.usageInterval(), settings.defaultRunDuration(), settings.checkpointSave()), clock);
        fleet.handle(new NodeCommand("c1", NodeCommandType.START, "sim-a100-0", "a1", "j1", "acme", List.of(0, 1, 2, 3),
                null, 0, 0, 1, null, List.of("sleep", "3600"), Map.of(), null, null, null, T0));
        List<TelemetrySample> out = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            out.addAll(fleet.sample());
            clock.advanceSeconds(5);
        }
        return out;
    }

    @Test
    void theSameSeedGivesTheSameReadings() {
        assertThat(history(7, 5)).isEqualTo(history(7, 5));
        assertThat(history(7, 5)).isNotEqualTo(history(8, 5));
    }

    static Stream<Arguments> models() {
        return Stream.of(
                Arguments.of(GpuModel.A100_SXM4_40GB), Arguments.of(GpuModel.H100_SXM5_80GB),
                Arguments.of(GpuModel.A10G), Arguments.of(GpuModel.V100_SXM2_16GB));
    }

    @ParameterizedTest(name = "{0}: busy near TDP, idle near idle power")
    @MethodSource("models")
    void busyAndIdleReadingsStayInTheirRanges(GpuModel model) {
        List<TelemetrySample> samples = history(42, 20);
        List<GpuReading> a100 = samples.stream().filter(s -> s.nodeId().equals("sim-a100-0"))
                .flatMap(s -> s.gpus().stream()).toList();
        List<GpuReading> readings = samples.stream().flatMap(s -> s.gpus().stream())
                .filter(r -> r.model().equals(model.modelName)).toList();
        assertThat(readings).isNotEmpty();
        for (GpuReading r : readings) {
            boolean busy = a100.contains(r) && r.index() < 4;
            if (busy) {
                assertThat(r.gpuUtilPercent()).isBetween(85.0, 99.0);
                assertThat(r.memoryUsedMib()).isBetween((long) (model.memoryMib * 0.6), (long) (model.memoryMib * 0.9));
                assertThat(r.powerWatts()).isBetween(model.tdpWatts * 0.85, (double) model.tdpWatts);
                assertThat(r.smClockMhz()).isGreaterThan(model.maxSmClockMhz - 100);
            } else {
                assertThat(r.gpuUtilPercent()).isZero();
                assertThat(r.memoryUsedMib()).isZero();
                assertThat(r.powerWatts()).isBetween((double) model.idleWatts, model.idleWatts + 3.0);
                assertThat(r.smClockMhz()).isEqualTo(GpuModel.IDLE_SM_CLOCK_MHZ);
            }
            assertThat(r.memoryUsedMib() + r.memoryFreeMib()).isEqualTo(model.memoryMib);
            assertThat(r.temperatureC()).isBetween(25, 80);
            assertThat(r.memoryTemperatureC() != null).isEqualTo(model.reportsMemoryTemperature);
        }
    }

    @Test
    void energyOnlyGrowsByPowerTimesTime() {
        List<TelemetrySample> samples = history(42, 10).stream().filter(s -> s.nodeId().equals("sim-a100-0")).toList();
        for (int i = 1; i < samples.size(); i++) {
            GpuReading before = samples.get(i - 1).gpus().get(0);
            GpuReading after = samples.get(i).gpus().get(0);
            assertThat(after.energyMillijoules() - before.energyMillijoules())
                    .isEqualTo(Math.round(after.powerWatts() * 5_000));
        }
    }
}
