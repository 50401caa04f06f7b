package dev.gpucloud.contracts.events;

/**
 * One port of a host's RDMA NIC, as the agent reads it from /sys/class/infiniband: the device
 * (e.g. {@code mlx5_0}), the port number, its state ({@code ACTIVE}, {@code DOWN}, {@code INIT}...),
 * its link layer ({@code InfiniBand}, or {@code Ethernet} for RoCE) and its rate in Gb/s (0 when the
 * kernel does not say).
 */
public record RdmaNic(String device, int port, String state, String linkLayer, double rateGbps) {

    public RdmaNic {
        Require.text(device, "device");
        Require.atLeast(port, 1, "port");
        Require.text(state, "state");
        Require.text(linkLayer, "linkLayer");
        if (!(rateGbps >= 0) || Double.isInfinite(rateGbps)) {
            throw new IllegalArgumentException("field 'rateGbps' must be a finite number >= 0, got " + rateGbps);
        }
    }

    public boolean active() {
        return "ACTIVE".equals(state);
    }
}
