package dev.gpucloud.scheduler.cluster;

import java.util.ArrayList;
import java.util.List;

/**
 * One leaf switch of an RDMA fabric with the hosts under it (in id order), and how many of them
 * have each count of free whole GPUs, kept current on every reserve and release. A multi-host gang
 * reads these counts to bound a leaf's room without looking at its hosts. Mutated only by
 * {@link Fleet}.
 */
public final class RdmaLeaf {

    final String fabric;
    final String spine;
    final String name;
    final int fabricOrdinal;
    final int spineOrdinal;
    final List<NodeState> hosts = new ArrayList<>();
    final int[] hostsByFree;
    int maxGpus;

    RdmaLeaf(String fabric, String spine, String name, int fabricOrdinal, int spineOrdinal, int buckets) {
        this.fabric = fabric;
        this.spine = spine;
        this.name = name;
        this.fabricOrdinal = fabricOrdinal;
        this.spineOrdinal = spineOrdinal;
        this.hostsByFree = new int[buckets];
    }

    public String fabric() {
        return fabric;
    }

    public String spine() {
        return spine;
    }

    public String name() {
        return name;
    }

    /** Numbers the fabrics 0, 1, ... in name order; leaves of one fabric are adjacent in {@link Fleet#rdmaLeaves()}. */
    public int fabricOrdinal() {
        return fabricOrdinal;
    }

    /** Numbers the spines across all fabrics in tree order; leaves of one spine are adjacent. */
    public int spineOrdinal() {
        return spineOrdinal;
    }

    public int hostCount() {
        return hosts.size();
    }

    public NodeState host(int i) {
        return hosts.get(i);
    }

    /**
     * At most how many workers of {@code gpusPerWorker} whole GPUs this leaf's hosts could take now,
     * by free GPUs alone (filters, models, CPU and NVLink can only lower it).
     */
    public int roomBound(int gpusPerWorker) {
        int g = Math.max(1, gpusPerWorker);
        int room = 0;
        int top = Math.min(hostsByFree.length - 1, maxGpus);
        for (int k = g; k <= top; k++) {
            room += hostsByFree[k] * (k / g);
        }
        return room;
    }

    @Override
    public String toString() {
        return fabric + "/" + spine + "/" + name;
    }
}
