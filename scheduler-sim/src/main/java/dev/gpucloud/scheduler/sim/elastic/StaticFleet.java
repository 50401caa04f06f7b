package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.core.InstanceType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The baseline: a fixed number of on-demand hosts of one type, up before the first job and in one placement group
 * (a cluster that large jobs may span), billed from the first submission to the last finish.
 */
final class StaticFleet implements Fleet {

    static final String GROUP = "static";

    private final String name;
    private final List<SimHost> hosts = new ArrayList<>();
    private final double usdPerHour;
    private double costUsd;
    private double paidGpuMillis;

    StaticFleet(String name, InstanceType type, int count, long startMillis) {
        this.name = name;
        this.usdPerHour = type.onDemandUsdPerHour();
        for (int i = 0; i < count; i++) {
            SimHost h = new SimHost(String.format("static-%05d", i), type.name(), type.gpus(), Capacity.ON_DEMAND,
                    GROUP, startMillis, usdPerHour);
            h.running = true;
            hosts.add(h);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Collection<SimHost> hosts() {
        return hosts;
    }

    @Override
    public List<SimHost> scan(long now, Collection<FleetJob> queue) {
        return List.of();
    }

    @Override
    public List<Lost> reclaimed(long now) {
        return List.of();
    }

    @Override
    public void bill(long now) {
        for (SimHost h : hosts) {
            long dt = now - h.billedTo;
            costUsd += usdPerHour * dt / 3_600_000.0;
            paidGpuMillis += (double) h.gpus * dt;
            h.billedTo = now;
        }
    }

    @Override
    public void close(long now) {
        bill(now);
    }

    @Override
    public double spendUsdPerHour(long now) {
        return usdPerHour * hosts.size();
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
        return hosts.size();
    }

    @Override
    public int releases() {
        return 0;
    }

    @Override
    public int interruptions() {
        return 0;
    }
}
