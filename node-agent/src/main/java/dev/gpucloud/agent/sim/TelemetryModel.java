package dev.gpucloud.agent.sim;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.MigReading;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Draws plausible GPU readings for a simulated host. A held GPU reads busy (utilization 85-99 % of
 * its held share, memory 60-90 % used, power near TDP, boost clocks, warm); an idle one reads about
 * zero at idle power and clocks. The energy counter only grows, by power times the time since the
 * last sample. Every draw comes from the seed, the node, the GPU and the sample's number, so the
 * same seed and the same history give the same readings.
 */
public final class TelemetryModel {

    private final long seed;

    public TelemetryModel(long seed) {
        this.seed = seed;
    }

    /** One sample of every GPU on {@code host}, taken at {@code now}. */
    public TelemetrySample sample(SimulatedHost host, Instant now) {
        Instant previous = host.lastSampleAt();
        long sequence = host.nextSample(now);
        long elapsedMillis = previous == null ? 0 : Math.max(0, Duration.between(previous, now).toMillis());
        long[] energy = host.energyMillijoules();
        List<GpuReading> readings = new ArrayList<>();
        for (GpuDevice gpu : host.gpus()) {
            SplittableRandom random = new SplittableRandom(mix(host.nodeId(), gpu.index(), sequence));
            if (sequence == 0) {
                energy[gpu.index()] = initialEnergy(host, gpu.index());
            }
            GpuModel model = host.profile().model();
            double load = host.load(gpu.index());
            GpuReading reading = reading(host, gpu, model, load, random, energy[gpu.index()], elapsedMillis);
            energy[gpu.index()] = reading.energyMillijoules();
            readings.add(reading);
        }
        return new TelemetrySample(host.nodeId(), host.nodeId(), now, readings);
    }

    private GpuReading reading(SimulatedHost host, GpuDevice gpu, GpuModel model, double load, SplittableRandom random,
            long energyBefore, long elapsedMillis) {
        boolean busy = load > 0;
        double util = busy ? Math.min(100.0, round1(load * random.nextDouble(85, 99))) : 0.0;
        double memCopy = busy ? round1(load * random.nextDouble(30, 60)) : 0.0;
        long memUsed = busy ? Math.round(gpu.memoryMib() * load * random.nextDouble(0.60, 0.90)) : 0;
        double power = model.idleWatts + (busy
                ? load * (model.tdpWatts - model.idleWatts) * random.nextDouble(0.88, 1.0)
                : random.nextDouble(0, 3));
        power = round1(power);
        long energy = energyBefore + Math.round(power * elapsedMillis);
        int temperature = (int) Math.round(30 + load * 38 + random.nextDouble(0, 4));
        Integer memTemperature = model.reportsMemoryTemperature ? temperature + 4 + random.nextInt(4) : null;
        int smClock = busy ? model.maxSmClockMhz - random.nextInt(0, 61) : GpuModel.IDLE_SM_CLOCK_MHZ;
        double grActive = round3(util / 100.0);
        double tensorActive = busy ? round3(grActive * random.nextDouble(0.40, 0.70)) : 0.0;
        double dramActive = busy ? round3(load * random.nextDouble(0.30, 0.60)) : 0.0;
        List<MigReading> migs = new ArrayList<>();
        for (MigInstance mig : gpu.migInstances()) {
            boolean migBusy = host.migBusy(mig.uuid());
            migs.add(new MigReading(mig.gpuInstanceId(), mig.profile(), mig.uuid(),
                    migBusy ? Math.round(mig.memoryMib() * random.nextDouble(0.60, 0.90)) : 0,
                    migBusy ? round3(random.nextDouble(0.85, 0.99)) : 0.0));
        }
        return new GpuReading(gpu.index(), gpu.uuid(), gpu.model(), gpu.pciBusId(), util, memCopy, memUsed,
                gpu.memoryMib() - memUsed, power, energy, temperature, memTemperature, smClock, model.memClockMhz,
                0L, 0L, null, 0L, grActive, tensorActive, dramActive, migs);
    }

    /** The counter at the first sample: the driver was loaded some hours ago and has drawn idle power since. */
    private long initialEnergy(SimulatedHost host, int index) {
        SplittableRandom random = new SplittableRandom(mix(host.nodeId(), index, -1));
        long hours = 1 + random.nextInt(72);
        return host.profile().model().idleWatts * hours * 3600L * 1000L;
    }

    private long mix(String nodeId, int gpu, long sequence) {
        long h = seed;
        h = h * 0x9E3779B97F4A7C15L + nodeId.hashCode();
        h = h * 0x9E3779B97F4A7C15L + gpu;
        h = h * 0x9E3779B97F4A7C15L + sequence;
        return h;
    }

    private static double round1(double value) {
        return Math.round(value * 10) / 10.0;
    }

    private static double round3(double value) {
        return Math.round(value * 1000) / 1000.0;
    }
}
