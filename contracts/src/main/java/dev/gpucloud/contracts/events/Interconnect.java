package dev.gpucloud.contracts.events;

/** What a job needs between its GPUs: nothing, one NVLink island per worker, or one RDMA fabric. */
public enum Interconnect {
    NONE,
    NVLINK,
    RDMA
}
