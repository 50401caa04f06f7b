package dev.gpucloud.agent.inventory;

import dev.gpucloud.contracts.events.RdmaNic;

/**
 * One port of an RDMA NIC as /sys/class/infiniband shows it: device (mlx5_0), port number, state
 * (ACTIVE, DOWN...), link layer (InfiniBand or Ethernet, the latter being RoCE) and rate in Gb/s
 * (0 when unknown).
 */
public record RdmaPort(String device, int port, String state, String linkLayer, double rateGbps, String rate) {

    public boolean active() {
        return "ACTIVE".equals(state);
    }

    /** The port as gpu.inventory describes it. */
    public RdmaNic toNic() {
        return new RdmaNic(device, port, state, linkLayer, rateGbps);
    }
}
