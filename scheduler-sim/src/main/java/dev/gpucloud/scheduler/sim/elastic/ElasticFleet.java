package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.autoscaler.core.Autoscaler;
import dev.gpucloud.autoscaler.core.AutoscalerConfig;
import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.core.CapacityPreference;
import dev.gpucloud.autoscaler.core.Catalog;
import dev.gpucloud.autoscaler.core.Host;
import dev.gpucloud.autoscaler.core.HostState;
import dev.gpucloud.autoscaler.core.Launch;
import dev.gpucloud.autoscaler.core.PendingJob;
import dev.gpucloud.autoscaler.core.Plan;
import dev.gpucloud.autoscaler.core.PoolLimits;
import dev.gpucloud.autoscaler.core.Release;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import dev.gpucloud.autoscaler.provider.simulated.SimulatedProvider;
import dev.gpucloud.autoscaler.provider.simulated.SimulatedProviderConfig;
import dev.gpucloud.autoscaler.provider.simulated.SpotInterruption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The elastic fleet: at each scan it hands the queue and its hosts to {@link Autoscaler#decide} (the same pure core
 * the service runs) and carries out the plan through a {@link SimulatedProvider} on the simulation's clock. Hosts
 * are billed per second at on demand or at the provider's spot price of the moment.
 */
final class ElasticFleet implements Fleet {

    static final String POOL = "philly";
    /** One family: V100 hosts of 1, 4 and 8 GPUs, and the EFA type for gangs that span hosts. */
    static final Set<String> TYPES = Set.of("p3.2xlarge", "p3.8xlarge", "p3.16xlarge", "p3dn.24xlarge");

    private final Catalog catalog;
    private final SimulatedProvider provider;
    private final Map<String, PoolLimits> limits;
    private final AutoscalerConfig config;
    private final ElasticSettings settings;
    private final Map<String, SimHost> hosts = new TreeMap<>();
    private long now;
    private long lastReclaimCheck = Long.MIN_VALUE;
    private int scans;
    private int launches;
    private int releases;
    private int interruptions;
    private int drains;
    private int refusals;
    private double costUsd;
    private double paidGpuMillis;

    ElasticFleet(Catalog catalog, ElasticSettings settings, long startMillis) {
        this.catalog = catalog;
        this.settings = settings;
        this.now = startMillis;
        SimulatedProviderConfig pc = SimulatedProviderConfig.defaults(settings.seed())
                .withBootDelay(settings.bootDelay())
                .withInterruptionRate(settings.interruptionsPerHour())
                .withSpotCapacity(settings.spotGpusPerZone(), Map.of());
        this.provider = new SimulatedProvider(catalog, () -> now, pc);
        this.limits = Map.of(POOL, PoolLimits.unlimited().withInstanceTypes(TYPES));
        this.config = new AutoscalerConfig(settings.idleTimeout(), settings.lowUtilization(), Duration.ofMinutes(15),
                settings.scanInterval());
    }

    @Override
    public String name() {
        return "elastic";
    }

    @Override
    public Collection<SimHost> hosts() {
        return hosts.values();
    }

    SimulatedProvider provider() {
        return provider;
    }

    @Override
    public List<SimHost> scan(long at, Collection<FleetJob> queue) {
        now = at;
        scans++;
        for (ProviderInstance pi : provider.instances()) {
            SimHost h = hosts.get(pi.instanceId());
            if (h != null && !h.running && pi.state() == ProviderInstance.State.RUNNING) {
                h.running = true;
                h.idleSince = h.launchedAt + settings.bootDelay().toMillis();
            }
        }
        List<Host> supply = new ArrayList<>(hosts.size());
        for (SimHost h : hosts.values()) {
            supply.add(supplyOf(h));
        }
        List<PendingJob> pending = new ArrayList<>(queue.size());
        for (FleetJob j : queue) {
            pending.add(new PendingJob(j.id(), POOL, j.workers, j.gpusPerWorker, List.of(), j.workers > 1,
                    CapacityPreference.ANY, j.checkpointable, Double.NaN, j.queuedSince));
        }
        Plan plan = Autoscaler.decide(at, pending, supply, catalog, limits, config);
        List<SimHost> drained = new ArrayList<>();
        List<String> gone = new ArrayList<>();
        for (Release r : plan.releases()) {
            SimHost h = hosts.get(r.hostId());
            if (h == null) {
                continue;
            }
            if (r.action() == Release.Action.DRAIN) {
                h.draining = true;
                drained.add(h);
                drains++;
            } else {
                hosts.remove(h.id);
                gone.add(h.id);
                releases++;
            }
        }
        provider.release(gone);
        int n = 0;
        for (Launch l : plan.launches()) {
            LaunchOutcome o = provider.launch(new LaunchRequest("scan-" + scans + "-" + n++, l.pool(),
                    l.instanceType(), l.count(), l.capacity(), l.onDemandFallback(), l.zones(), l.placementGroup(),
                    Map.of()));
            if (l.capacity() == Capacity.SPOT) {
                refusals += l.count() - (int) o.launched().stream().filter(i -> i.capacity() == Capacity.SPOT).count();
            }
            for (ProviderInstance pi : o.launched()) {
                var type = catalog.require(pi.instanceType());
                hosts.put(pi.instanceId(), new SimHost(pi.instanceId(), type.name(), type.gpus(), pi.capacity(),
                        pi.placementGroup(), at, type.onDemandUsdPerHour()));
                launches++;
            }
        }
        return drained;
    }

    private static Host supplyOf(SimHost h) {
        if (!h.running) {
            return Host.launching(h.id, POOL, h.type, h.capacity, h.launchedAt, h.placementGroup);
        }
        boolean checkpointable = true;
        for (FleetJob j : h.jobs) {
            checkpointable &= j.checkpointable;
        }
        return new Host(h.id, POOL, h.type, h.capacity, h.draining ? HostState.DRAINING : HostState.RUNNING,
                h.launchedAt, h.free, h.allocated(), (double) h.allocated() / h.gpus, h.idleSince, checkpointable,
                h.placementGroup);
    }

    @Override
    public List<Lost> reclaimed(long at) {
        now = at;
        List<SpotInterruption> list = provider.interruptedSince(lastReclaimCheck);
        lastReclaimCheck = at;
        if (list.isEmpty()) {
            return List.of();
        }
        List<Lost> out = new ArrayList<>(list.size());
        for (SpotInterruption i : list) {
            SimHost h = hosts.remove(i.instanceId());
            if (h != null) {
                billHost(h, i.atMillis(), provider.spotUsdPerHour(h.type));
                interruptions++;
                out.add(new Lost(h, i.atMillis()));
            }
        }
        return out;
    }

    @Override
    public void bill(long at) {
        now = at;
        Map<String, Double> spot = new HashMap<>();
        for (SimHost h : hosts.values()) {
            double price = h.capacity == Capacity.SPOT
                    ? spot.computeIfAbsent(h.type, provider::spotUsdPerHour) : h.onDemandUsdPerHour;
            billHost(h, at, price);
        }
    }

    private void billHost(SimHost h, long to, double usdPerHour) {
        long dt = Math.max(0, to - h.billedTo);
        costUsd += usdPerHour * dt / 3_600_000.0;
        paidGpuMillis += (double) h.gpus * dt;
        h.billedTo = Math.max(h.billedTo, to);
    }

    @Override
    public void close(long at) {
        bill(at);
        releases += hosts.size();
        provider.release(new ArrayList<>(hosts.keySet()));
        hosts.clear();
    }

    @Override
    public double spendUsdPerHour(long at) {
        now = at;
        double usd = 0;
        for (SimHost h : hosts.values()) {
            usd += h.capacity == Capacity.SPOT ? provider.spotUsdPerHour(h.type) : h.onDemandUsdPerHour;
        }
        return usd;
    }

    @Override
    public double costUsd() {
        return costUsd;
    }

    @Override
    public double paidGpuMillis() {
        return paidGpuMillis;
    }

    @Override
    public int launches() {
        return launches;
    }

    @Override
    public int releases() {
        return releases;
    }

    @Override
    public int interruptions() {
        return interruptions;
    }

    @Override
    public int drains() {
        return drains;
    }

    @Override
    public int spotShortfall() {
        return refusals;
    }
}
