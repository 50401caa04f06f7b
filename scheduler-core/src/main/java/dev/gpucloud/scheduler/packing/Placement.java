package dev.gpucloud.scheduler.packing;

/** Where a packing policy puts a task: the node's index in the list it was given, its GPUs, and the score (lower is better). */
public record Placement(int nodeIndex, GpuChoice gpus, double score) {
}
