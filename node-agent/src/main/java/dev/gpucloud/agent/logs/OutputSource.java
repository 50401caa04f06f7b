package dev.gpucloud.agent.logs;

import java.nio.file.Path;

/** One worker's run whose output goes to {@code job.logs}: who it is, and the files its two streams are written to. */
public record OutputSource(String allocationId, String jobId, String tenant, String nodeId, int rank, Path stdout,
        Path stderr) {
}
