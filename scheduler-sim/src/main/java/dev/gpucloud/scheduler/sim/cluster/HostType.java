package dev.gpucloud.scheduler.sim.cluster;

/**
 * One row of a fleet spec: {@code count} hosts of an instance type, each with {@code gpus} GPUs of one
 * model. {@code spotHosts} of them (the last ones) are spot capacity at {@code spotPriceMicrosPerHour};
 * the rest are on demand at {@code priceMicrosPerHour}. {@code fabric} names the RDMA fabric the hosts
 * share, or is null for none; with {@code nvlink} a host's GPUs form one NVLink island. Money is in
 * micro-USD per host-hour.
 */
public record HostType(
        String name,
        int count,
        String gpuModel,
        int gpus,
        long gpuMemoryMib,
        boolean nvlink,
        int cpuMillis,
        long memoryMib,
        String fabric,
        int spotHosts,
        long priceMicrosPerHour,
        long spotPriceMicrosPerHour) {

    public HostType {
        if (name == null || name.isBlank() || gpuModel == null || gpuModel.isBlank()) {
            throw new IllegalArgumentException("a host type needs its name and GPU model");
        }
        if (count < 0 || gpus < 0 || gpuMemoryMib < 1 || cpuMillis < 0 || memoryMib < 0) {
            throw new IllegalArgumentException("host type " + name + ": counts and sizes out of range");
        }
        if (spotHosts < 0 || spotHosts > count) {
            throw new IllegalArgumentException("host type " + name + ": spotHosts must be within 0.." + count);
        }
        if (priceMicrosPerHour < 0 || spotPriceMicrosPerHour < 0) {
            throw new IllegalArgumentException("host type " + name + ": prices must be >= 0");
        }
        fabric = fabric == null || fabric.isBlank() ? null : fabric;
    }

    public int onDemandHosts() {
        return count - spotHosts;
    }
}
