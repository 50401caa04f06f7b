package dev.gpucloud.bench;

import dev.gpucloud.autoscaler.core.Autoscaler;
import dev.gpucloud.autoscaler.core.AutoscalerConfig;
import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.core.CapacityPreference;
import dev.gpucloud.autoscaler.core.Catalog;
import dev.gpucloud.autoscaler.core.Host;
import dev.gpucloud.autoscaler.core.HostState;
import dev.gpucloud.autoscaler.core.InstanceType;
import dev.gpucloud.autoscaler.core.PendingJob;
import dev.gpucloud.autoscaler.core.Plan;
import dev.gpucloud.autoscaler.core.PoolLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One autoscaler decision over 10,000 pending jobs of mixed shapes (1 to 4 workers of 1, 2, 4 or 8 GPUs, eight
 * model choices, one in twenty a fabric gang, half checkpointable, one in ten with a price ceiling) in three pools,
 * against 600 hosts (registered with some free GPUs, launching, idle, underused) and a catalog of 50 types: the
 * AWS catalog's 21 and variants of them at other prices. Each operation is a whole {@code decide} call.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgs = {"-Xms1g", "-Xmx1g"})
public class AutoscalerDecisionBenchmark {

    static final long NOW = 1_000_000_000L;
    static final String[] POOLS = {"batch", "infer", "train"};

    private Catalog catalog;
    private List<PendingJob> pending;
    private List<Host> supply;
    private Map<String, PoolLimits> limits;
    private AutoscalerConfig config;

    @Setup(Level.Trial)
    public void setUp() {
        catalog = fiftyTypes();
        Random r = new Random(42);
        pending = jobs(r, 10_000);
        supply = hosts(r, catalog, 600);
        limits = Map.of("batch", PoolLimits.of(0, 5_000, 100_000, 2_000),
                "infer", PoolLimits.of(2, 5_000, 100_000, 2_000),
                "train", PoolLimits.of(0, 5_000, 150_000, 2_000));
        config = AutoscalerConfig.defaults();
    }

    /** The AWS types, then variants of them (other names, prices 3% apart) up to 50. */
    static Catalog fiftyTypes() {
        List<InstanceType> base = Catalog.aws().types();
        List<InstanceType> types = new ArrayList<>(base);
        for (int i = 0; types.size() < 50; i++) {
            InstanceType b = base.get(i % base.size());
            double f = 1 + 0.03 * (1 + i / base.size()) * (i % 2 == 0 ? 1 : -1);
            types.add(new InstanceType(b.name() + "-v" + i, b.gpuModel(), b.gpus(), b.rdma(),
                    b.onDemandUsdPerHour() * f, b.offersSpot() ? b.spotUsdPerHour() * f : Double.NaN, b.zones()));
        }
        return Catalog.of(types);
    }

    static List<PendingJob> jobs(Random r, int n) {
        String[] models = {"A100", "H100", "A10G", "T4", "L4", "V100", "L40S", null};
        int[] gpw = {1, 1, 1, 2, 2, 4, 8, 8};
        List<PendingJob> jobs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            boolean fabric = r.nextInt(20) == 0;
            String model = fabric ? (r.nextBoolean() ? "A100" : "H100") : models[r.nextInt(models.length)];
            int g = fabric ? 8 : gpw[r.nextInt(gpw.length)];
            int workers = fabric ? 2 + r.nextInt(7) : 1 + r.nextInt(4);
            CapacityPreference pref = switch (r.nextInt(10)) {
                case 0 -> CapacityPreference.SPOT;
                case 1 -> CapacityPreference.ON_DEMAND;
                default -> CapacityPreference.ANY;
            };
            double ceiling = r.nextInt(10) == 0 ? 2.0 * workers * g : 0;
            jobs.add(new PendingJob("job-" + i, POOLS[r.nextInt(POOLS.length)], workers, g,
                    model == null ? List.of() : List.of(model), fabric, pref, r.nextBoolean(), ceiling,
                    NOW - r.nextInt(3_600_000)));
        }
        return jobs;
    }

    static List<Host> hosts(Random r, Catalog catalog, int n) {
        List<InstanceType> types = catalog.types();
        List<Host> hosts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            InstanceType t = types.get(r.nextInt(types.size()));
            String pool = POOLS[r.nextInt(POOLS.length)];
            Capacity cap = r.nextBoolean() && t.offersSpot() ? Capacity.SPOT : Capacity.ON_DEMAND;
            int kind = r.nextInt(10);
            Host h;
            if (kind == 0) {
                h = Host.launching("host-" + i, pool, t.name(), cap, NOW - r.nextInt(1_200_000), null);
            } else if (kind == 1) {
                h = new Host("host-" + i, pool, t.name(), cap, HostState.RUNNING, NOW - 7_200_000, t.gpus(), 0, 0,
                        NOW - r.nextInt(1_800_000), true, null);
            } else {
                int alloc = 1 + r.nextInt(t.gpus());
                double util = r.nextDouble();
                h = new Host("host-" + i, pool, t.name(), cap, HostState.RUNNING, NOW - 7_200_000, t.gpus() - alloc,
                        alloc, util, util < 0.7 ? NOW - r.nextInt(1_800_000) : -1, r.nextBoolean(), null);
            }
            hosts.add(h);
        }
        return hosts;
    }

    @Benchmark
    public Plan decideTenThousandJobs() {
        return Autoscaler.decide(NOW, pending, supply, catalog, limits, config);
    }

    /** Prints what one decision does with the benchmark's inputs, so the figure is read right. */
    public static void main(String[] args) {
        AutoscalerDecisionBenchmark b = new AutoscalerDecisionBenchmark();
        b.setUp();
        Plan p = b.decideTenThousandJobs();
        Map<String, Long> kinds = new java.util.TreeMap<>();
        p.decisions().forEach(d -> kinds.merge(d.kind().name(), (long) Math.max(1, d.jobIds().size()), Long::sum));
        System.out.printf("%d types, %d jobs, %d hosts: %d launches (%d hosts), %d releases; jobs or hosts by decision"
                + " kind: %s%n", b.catalog.types().size(), b.pending.size(), b.supply.size(), p.launches().size(),
                p.hostsToLaunch(), p.releases().size(), kinds);
    }
}
