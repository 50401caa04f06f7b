package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The round's view of supply, indexed by host: each host's catalog type (null when the catalog does not know it),
 * the GPUs still free as demand is laid on them, whether pending demand needs the host, and whether this round lets
 * it go. Mutable, and private to one {@link Autoscaler#decide} call.
 */
final class SupplyState {

    final Host[] hosts;
    final InstanceType[] types;
    final int[] free;
    final boolean[] needed;
    final boolean[] leaving;
    /** Released this round: it no longer counts against the pool's hosts or budget (a drained host still does). */
    final boolean[] gone;

    SupplyState(List<Host> supply, Catalog catalog, List<Decision> config) {
        List<Host> sorted = new ArrayList<>(supply.size());
        for (Host h : supply) {
            if (h == null) {
                throw new IllegalArgumentException("supply holds a null host");
            }
            sorted.add(h);
        }
        sorted.sort(Comparator.comparing(Host::hostId));
        hosts = sorted.toArray(new Host[0]);
        int n = hosts.length;
        types = new InstanceType[n];
        free = new int[n];
        needed = new boolean[n];
        leaving = new boolean[n];
        gone = new boolean[n];
        for (int i = 0; i < n; i++) {
            Host h = hosts[i];
            if (i > 0 && hosts[i - 1].hostId().equals(h.hostId())) {
                throw new IllegalArgumentException("supply lists host " + h.hostId() + " twice");
            }
            types[i] = catalog.find(h.instanceType()).orElse(null);
            if (types[i] == null) {
                config.add(new Decision(Decision.Kind.CONFIG, h.hostId(), List.of(), "host " + h.hostId()
                        + ": instance type " + h.instanceType() + " is not in the catalog; it takes no demand"
                        + " and counts 0 USD/h against the budget"));
                continue;
            }
            free[i] = h.state() == HostState.LAUNCHING ? types[i].gpus() : Math.min(h.freeGpus(), types[i].gpus());
        }
    }

    /** Whether the host can take pending demand: registered or on its way, and not let go this round. */
    boolean takesDemand(int i) {
        return types[i] != null && !leaving[i] && hosts[i].state() != HostState.DRAINING;
    }

    /** The host's price per hour, 0 when its type is unknown. */
    double usdPerHour(int i) {
        if (types[i] == null) {
            return 0;
        }
        double p = types[i].usdPerHour(hosts[i].capacity());
        return Double.isNaN(p) ? types[i].onDemandUsdPerHour() : p;
    }

    /** The host's GPU model, "?" when its type is unknown. */
    String gpuModel(int i) {
        return types[i] == null ? "?" : types[i].gpuModel();
    }
}
