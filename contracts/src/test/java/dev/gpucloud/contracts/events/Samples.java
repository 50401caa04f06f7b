package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/** One valid payload of each topic, as tests and docs/events.md show them. */
public final class Samples {
    static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    private Samples() {
    }

    public static HostInventory inventory() {
        return new HostInventory("node-a100-1", "a100-1.local", "p4d.24xlarge", "us-east-1a", CapacityType.ON_DEMAND,
                21_960_000L, 96_000, 1_152_000L, "a", List.of("spine-1", "leaf-1"),
                List.of(new GpuDevice(0, "GPU-0b1c", "A100-SXM4-40GB", 40_960, "00000000:10:1C.0", 0, false, List.of()),
                        new GpuDevice(1, "GPU-1d2e", "A100-SXM4-40GB", 40_960, "00000000:10:1D.0", 0, true,
                                List.of(new MigInstance(1, "1g.5gb", "MIG-aa11", 4_864, 6)))),
                List.of("imagenet"), "simulated", T0,
                List.of(new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", 200.0)));
    }

    public static TelemetrySample telemetry() {
        return new TelemetrySample("node-a100-1", "a100-1.local", T0, List.of(new GpuReading(0, "GPU-0b1c",
                "A100-SXM4-40GB", "00000000:10:1C.0", 87.5, 41.0, 30_100, 10_860, 312.4, 9_876_543L, 61, 70,
                1410, 1215, 0L, 0L, null, 0L, 0.85, 0.42, 0.37,
                List.of(new MigReading(1, "1g.5gb", "MIG-aa11", 1_024, 0.5)))));
    }

    public static NodeEvent nodeEvent() {
        return new NodeEvent("node-v100-spot-1", NodeEventType.SPOT_INTERRUPTION, T0, T0.plusSeconds(120), null,
                null, "aws instance-action terminate");
    }

    public static NodeCommand nodeCommand() {
        return new NodeCommand("job-1/alloc-1/start", NodeCommandType.START, "node-a100-1", "alloc-1", "job-1",
                "acme", List.of(0, 1), null, 0, 0, 1, "a100-1.local:29500", List.of("python", "train.py"),
                Map.of("EPOCHS", "3"), "/ckpt/job-1", null, null, T0);
    }

    public static AllocationEvent allocationEvent() {
        return new AllocationEvent("alloc-1", "job-1", "node-a100-1", AllocationEventType.EXITED, T0, 0, null,
                "exited normally");
    }

    public static UsageEvent usageEvent() {
        return new UsageEvent("alloc-1", "job-1", "acme", "node-a100-1", T0, T0.plusSeconds(30),
                Sku.wholeGpu("A100-SXM4-40GB"), 2, CapacityType.ON_DEMAND, "us-east-1a");
    }

    public static JobSpec jobSpec() {
        return new JobSpec("resnet50", 1, 2, null, 0, 8_000, 65_536, List.of("A100-SXM4-40GB"), 40_000,
                Interconnect.NVLINK, CapacityPreference.ON_DEMAND, PriorityClass.NORMAL,
                new CheckpointPolicy(600, "s3://ckpt/resnet50"), 3_600, null, 0, List.of("sleep", "20"), Map.of());
    }

    public static JobRequest jobRequest() {
        return new JobRequest("acme", "req-42", jobSpec());
    }

    public static JobEvent jobEvent() {
        return new JobEvent("job-1", "acme", JobState.RUNNING, "all workers started", T0,
                List.of(new WorkerPlacement(0, "node-a100-1", List.of(0, 1), "alloc-1")), null);
    }

    public static GpuAdvisory gpuAdvisory() {
        return new GpuAdvisory(AdvisoryKind.IDLE, "alloc-1", "job-1", "acme", "node-a100-1", T0,
                T0.plusSeconds(600), 12.5, 70);
    }

    public static AuditEvent auditEvent() {
        return new AuditEvent("alice", "acme", List.of("member"), "scheduler.SubmitJob", "job-1", T0,
                "127.0.0.1:50312", AuditEvent.OK, "");
    }

    /** Each topic with a sample payload and a required field to take away. */
    public static List<Object[]> perTopic() {
        return List.of(
                new Object[] {Topics.GPU_INVENTORY, inventory(), "nodeId"},
                new Object[] {Topics.GPU_TELEMETRY, telemetry(), "sampledAt"},
                new Object[] {Topics.NODE_EVENTS, nodeEvent(), "type"},
                new Object[] {Topics.NODE_COMMANDS, nodeCommand(), "allocationId"},
                new Object[] {Topics.ALLOCATION_EVENTS, allocationEvent(), "jobId"},
                new Object[] {Topics.USAGE_EVENTS, usageEvent(), "tenant"},
                new Object[] {Topics.JOB_REQUESTS, jobRequest(), "clientRequestId"},
                new Object[] {Topics.JOB_EVENTS, jobEvent(), "state"},
                new Object[] {Topics.GPU_ADVISORIES, gpuAdvisory(), "allocationId"},
                new Object[] {Topics.AUDIT_EVENTS, auditEvent(), "action"});
    }
}
