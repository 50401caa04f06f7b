package dev.gpucloud.autoscaler.provider.simulated;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.core.Catalog;
import dev.gpucloud.autoscaler.core.InstanceType;
import dev.gpucloud.autoscaler.provider.FleetProvider;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.LaunchOutcome.LaunchError;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * A cloud in memory, on the caller's clock. An instance boots for the configured delay (PENDING), then runs until it
 * is released or, bought as spot, reclaimed; a zone sells only so many spot GPUs at a time, and a spot launch it
 * cannot serve is refused with {@code InsufficientInstanceCapacity} (or bought on demand where the request allows);
 * spot prices walk by the hour. The same seed and the same calls at the same clock readings give the same fleet.
 */
public final class SimulatedProvider implements FleetProvider {

    /** The refusal code of a zone out of spot capacity, as EC2 spells it. */
    public static final String INSUFFICIENT_CAPACITY = "InsufficientInstanceCapacity";
    /** The refusal code of a type the catalog does not hold. */
    public static final String UNSUPPORTED = "Unsupported";

    private final Catalog catalog;
    private final LongSupplier clock;
    private final SimulatedProviderConfig config;
    private final Random reclaims;
    private final Map<String, Instance> live = new TreeMap<>();
    private final Map<String, List<String>> byRequest = new HashMap<>();
    private final PriorityQueue<Instance> reclaimQueue = new PriorityQueue<>(
            (a, b) -> a.reclaimAt != b.reclaimAt ? Long.compare(a.reclaimAt, b.reclaimAt) : a.id.compareTo(b.id));
    private final List<SpotInterruption> interruptions = new ArrayList<>();
    private final Map<String, Integer> spotGpusInUse = new HashMap<>();
    private final Map<String, SpotPriceWalk> prices = new HashMap<>();
    private final Map<String, Instance> everLaunched = new HashMap<>();
    private long lastNow = Long.MIN_VALUE;
    private int nextId = 1;

    public SimulatedProvider(Catalog catalog, LongSupplier clock, SimulatedProviderConfig config) {
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.config = Objects.requireNonNull(config, "config");
        this.reclaims = new Random(config.seed());
    }

    @Override
    public String name() {
        return "simulated";
    }

    @Override
    public LaunchOutcome launch(LaunchRequest request) {
        long now = advance();
        List<String> earlier = byRequest.get(request.requestId());
        if (earlier != null) {
            return new LaunchOutcome(earlier.stream().map(id -> view(everLaunched.get(id), now)).toList(), List.of());
        }
        InstanceType type = catalog.find(request.instanceType()).orElse(null);
        if (type == null) {
            byRequest.put(request.requestId(), List.of());
            return new LaunchOutcome(List.of(), List.of(new LaunchError(UNSUPPORTED, "instance type "
                    + request.instanceType() + " is not offered", null, request.capacity())));
        }
        List<String> zones = request.zones().isEmpty() ? type.zones() : request.zones();
        if (zones.isEmpty()) {
            zones = List.of("zone-a");
        }
        List<Instance> launched = new ArrayList<>();
        List<LaunchError> errors = new ArrayList<>();
        int left = request.count();
        if (request.capacity() == Capacity.SPOT) {
            Map<String, Integer> refusedByZone = new LinkedHashMap<>();
            for (String zone : zones) {
                int fit = type.offersSpot() ? spotRoom(zone) / type.gpus() : 0;
                int take = Math.min(fit, left);
                for (int i = 0; i < take; i++) {
                    launched.add(start(request, type, Capacity.SPOT, zone, now));
                }
                left -= take;
                if (left > 0) {
                    refusedByZone.put(zone, left);
                }
                if (left == 0) {
                    break;
                }
            }
            if (left > 0 && !request.onDemandFallback()) {
                for (var e : refusedByZone.entrySet()) {
                    errors.add(new LaunchError(INSUFFICIENT_CAPACITY, "no spot capacity for " + e.getValue() + " x "
                            + type.name() + " in " + e.getKey() + " (" + spotRoom(e.getKey()) + " spot GPU(s) left)",
                            e.getKey(), Capacity.SPOT));
                }
                left = 0;
            }
        }
        for (int i = 0; i < left; i++) {
            launched.add(start(request, type, Capacity.ON_DEMAND, zones.get(0), now));
        }
        byRequest.put(request.requestId(), launched.stream().map(in -> in.id).toList());
        return new LaunchOutcome(launched.stream().map(in -> view(in, now)).toList(), errors);
    }

    @Override
    public void release(Collection<String> instanceIds) {
        long now = advance();
        for (String id : instanceIds) {
            Instance in = live.get(id);
            if (in != null) {
                terminate(in, now);
            }
        }
    }

    @Override
    public List<ProviderInstance> instances() {
        long now = advance();
        List<ProviderInstance> out = new ArrayList<>(live.size());
        for (Instance in : live.values()) {
            out.add(view(in, now));
        }
        return out;
    }

    /** The spot instances reclaimed after {@code sinceMillis}, up to now, oldest first. */
    public List<SpotInterruption> interruptedSince(long sinceMillis) {
        advance();
        List<SpotInterruption> out = new ArrayList<>();
        for (int i = interruptions.size() - 1; i >= 0 && interruptions.get(i).atMillis() > sinceMillis; i--) {
            out.add(interruptions.get(i));
        }
        java.util.Collections.reverse(out);
        return out;
    }

    /** The spot price of a type now, in USD per hour; NaN where the type sells no spot or is not offered. */
    public double spotUsdPerHour(String instanceType) {
        long now = advance();
        InstanceType type = catalog.find(instanceType).orElse(null);
        if (type == null || !type.offersSpot()) {
            return Double.NaN;
        }
        return prices.computeIfAbsent(type.name(), n -> new SpotPriceWalk(type, config)).at(now);
    }

    /** What an instance of this type costs per hour now, bought as {@code capacity}. */
    public double usdPerHour(String instanceType, Capacity capacity) {
        if (capacity == Capacity.SPOT) {
            return spotUsdPerHour(instanceType);
        }
        return catalog.find(instanceType).map(InstanceType::onDemandUsdPerHour).orElse(Double.NaN);
    }

    /** The spot GPUs a zone can still sell now. */
    public int spotGpusLeft(String zone) {
        advance();
        return spotRoom(zone);
    }

    private int spotRoom(String zone) {
        return Math.max(0, config.spotGpus(zone) - spotGpusInUse.getOrDefault(zone, 0));
    }

    private Instance start(LaunchRequest r, InstanceType type, Capacity capacity, String zone, long now) {
        String id = String.format("sim-%07d", nextId++);
        Instance in = new Instance(id, type, capacity, zone, r.placementGroup(), r.pool(), now);
        live.put(id, in);
        everLaunched.put(id, in);
        if (capacity == Capacity.SPOT) {
            spotGpusInUse.merge(zone, type.gpus(), Integer::sum);
            double rate = config.interruptionsPerInstanceHour();
            if (rate > 0) {
                double hours = -Math.log(1 - reclaims.nextDouble()) / rate;
                in.reclaimAt = now + Math.max(1, (long) Math.min(hours * 3_600_000, Long.MAX_VALUE / 4.0));
                reclaimQueue.add(in);
            }
        }
        return in;
    }

    private void terminate(Instance in, long at) {
        live.remove(in.id);
        in.terminatedAt = at;
        if (in.capacity == Capacity.SPOT) {
            spotGpusInUse.merge(in.zone, -in.type.gpus(), Integer::sum);
        }
    }

    /** Reads the clock once and carries out the reclaims due by then. */
    private long advance() {
        long now = clock.getAsLong();
        if (now < lastNow) {
            throw new IllegalStateException("the clock went back from " + lastNow + " to " + now);
        }
        lastNow = now;
        while (!reclaimQueue.isEmpty() && reclaimQueue.peek().reclaimAt <= now) {
            Instance in = reclaimQueue.poll();
            if (in.terminatedAt < 0) {
                terminate(in, in.reclaimAt);
                interruptions.add(new SpotInterruption(in.id, in.type.name(), in.zone, in.pool, in.reclaimAt));
            }
        }
        return now;
    }

    private ProviderInstance view(Instance in, long now) {
        ProviderInstance.State state;
        if (in.terminatedAt >= 0) {
            state = ProviderInstance.State.TERMINATED;
        } else if (now < in.launchedAt + config.bootDelay().toMillis()) {
            state = ProviderInstance.State.PENDING;
        } else {
            state = ProviderInstance.State.RUNNING;
        }
        return new ProviderInstance(in.id, in.type.name(), in.capacity, in.zone, in.placementGroup, state,
                Instant.ofEpochMilli(in.launchedAt), in.pool);
    }

    /** One instance's life; mutable, private to the provider. */
    private static final class Instance {
        final String id;
        final InstanceType type;
        final Capacity capacity;
        final String zone;
        final String placementGroup;
        final String pool;
        final long launchedAt;
        long reclaimAt = Long.MAX_VALUE;
        long terminatedAt = -1;

        Instance(String id, InstanceType type, Capacity capacity, String zone, String placementGroup, String pool,
                long launchedAt) {
            this.id = id;
            this.type = type;
            this.capacity = capacity;
            this.zone = zone;
            this.placementGroup = placementGroup;
            this.pool = pool;
            this.launchedAt = launchedAt;
        }
    }
}
