package dev.gpucloud.bench;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One placement decision on 10,000 GPUs (1,250 hosts x 8 A100 80 GB; 125 of them in MIG mode; 5 RDMA
 * fabrics x 5 spines x 5 leaves x 10 hosts), filled to the given occupancy by placing a seeded mix of
 * 1-, 2-, 4- and 8-GPU jobs, fractions and MIG slices through the framework itself. Each operation
 * places one job and frees it again, so the fleet stays at its occupancy.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class PlacementBenchmark {

    static final long NOW = 1_000_000L;

    @Param({"0.5", "0.9"})
    public double occupancy;

    private Fleet fleet;
    private PlacementFramework framework;
    private PlacementRequest gpu1;
    private PlacementRequest gpu8;
    private PlacementRequest mig;
    private PlacementRequest fraction;
    private PlacementRequest gang16;

    @Setup(Level.Trial)
    public void setUp() {
        fleet = new Fleet();
        for (int h = 0; h < 1250; h++) {
            fleet.upsert(host(h), NOW);
        }
        framework = new PlacementFramework(Profile.defaults());
        fill(new Random(42));
        gpu1 = request("bench-1", 1, 1, null, 0, false);
        gpu8 = request("bench-8", 1, 8, null, 0, false);
        mig = request("bench-mig", 1, 0, "1g.10gb", 0, false);
        fraction = request("bench-frac", 1, 0, null, 250, false);
        gang16 = request("bench-gang", 16, 8, null, 0, true);
    }

    static HostInventory host(int h) {
        boolean migMode = h % 10 == 9;
        List<GpuDevice> gpus = new ArrayList<>(8);
        for (int i = 0; i < 8; i++) {
            gpus.add(new GpuDevice(i, "GPU-" + h + "-" + i, "A100-SXM4-80GB", 81_920, null, 0, migMode, List.of()));
        }
        int fabric = h / 250;
        int spine = h / 50;
        int leaf = h / 10;
        return new HostInventory("h" + h, "h" + h, "p4de.24xlarge", "zone-" + (h % 3), CapacityType.ON_DEMAND,
                40_960_000, 96_000, 1_152_000, "fabric-" + fabric, List.of("spine-" + spine, "leaf-" + leaf), gpus,
                List.of(), "simulated", Instant.EPOCH);
    }

    static PlacementRequest request(String id, int workers, int gpus, String migProfile, int milli, boolean rdma) {
        return new PlacementRequest(id, "bench", 0, workers, gpus, migProfile, milli, 0, 0, Set.of(), 0, rdma, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    private void fill(Random random) {
        long target = Math.round(occupancy * 10_000 * 1000);
        long used = 0;
        int n = 0;
        int misses = 0;
        String[] migs = {"1g.10gb", "2g.20gb", "3g.40gb", "1g.20gb"};
        while (used < target && misses < 1000) {
            int pick = random.nextInt(100);
            PlacementRequest r;
            long milli;
            if (pick < 40) {
                r = request("fill-" + n, 1, 1, null, 0, false);
                milli = 1000;
            } else if (pick < 55) {
                r = request("fill-" + n, 1, 2, null, 0, false);
                milli = 2000;
            } else if (pick < 70) {
                r = request("fill-" + n, 1, 4, null, 0, false);
                milli = 4000;
            } else if (pick < 85) {
                r = request("fill-" + n, 1, 8, null, 0, false);
                milli = 8000;
            } else if (pick < 93) {
                int m = 125 * (1 + random.nextInt(6));
                r = request("fill-" + n, 1, 0, null, m, false);
                milli = m;
            } else {
                String p = migs[random.nextInt(migs.length)];
                r = request("fill-" + n, 1, 0, p, 0, false);
                milli = 1000L * Integer.parseInt(p.substring(0, 1)) / 7;
            }
            n++;
            Decision d = framework.place(fleet, r, NOW);
            if (d.isPlaced()) {
                used += milli;
            } else {
                misses++;
            }
        }
    }

    private Decision placeAndFree(PlacementRequest r) {
        Decision d = framework.place(fleet, r, NOW);
        for (Assignment a : d.assignments()) {
            fleet.unreserve(a.allocationId());
        }
        return d;
    }

    @Benchmark
    public Decision oneGpu() {
        return placeAndFree(gpu1);
    }

    @Benchmark
    public Decision eightGpus() {
        return placeAndFree(gpu8);
    }

    @Benchmark
    public Decision migSlice() {
        return placeAndFree(mig);
    }

    @Benchmark
    public Decision fractionOfGpu() {
        return placeAndFree(fraction);
    }

    @Benchmark
    public Decision gangOf16HostsRdma() {
        return placeAndFree(gang16);
    }

    /** Prints whether each shape fits at each occupancy, so the figures are read right. */
    public static void main(String[] args) {
        for (double occ : new double[] {0.5, 0.9}) {
            PlacementBenchmark b = new PlacementBenchmark();
            b.occupancy = occ;
            b.setUp();
            System.out.printf("occupancy %.1f: 1 GPU %s, 8 GPUs %s, MIG %s, fraction %s, 16-host gang %s%n", occ,
                    b.oneGpu().isPlaced(), b.eightGpus().isPlaced(), b.migSlice().isPlaced(),
                    b.fractionOfGpu().isPlaced(), b.gangOf16HostsRdma().isPlaced());
        }
    }
}
