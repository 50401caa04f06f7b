package dev.gpucloud.scheduler.service.grpc;

import com.google.protobuf.Timestamp;
import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CheckpointPolicy;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.scheduler.state.JobArrays;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.contracts.events.WorkerPlacement;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.scheduler.service.engine.JobView;
import java.time.Instant;
import java.util.List;

/** Converts between the gRPC messages and gpucloud's own types; generated types stop here. */
final class ProtoMapper {

    private ProtoMapper() {
    }

    /** The request's spec as a JobSpec; an invalid one is an IllegalArgumentException naming the field. */
    static JobSpec toSpec(dev.gpucloud.contracts.grpc.v1.JobSpec p) {
        return new JobSpec(
                p.getName(),
                p.getWorkers(),
                unsigned(p.getGpusPerWorker(), "spec.gpus_per_worker"),
                p.getMigProfile(),
                unsigned(p.getMilliGpu(), "spec.milli_gpu"),
                unsigned(p.getCpuMillisPerWorker(), "spec.cpu_millis_per_worker"),
                unsignedLong(p.getMemoryMibPerWorker(), "spec.memory_mib_per_worker"),
                p.getGpuModelsList(),
                unsignedLong(p.getMinGpuMemoryMib(), "spec.min_gpu_memory_mib"),
                interconnect(p.getInterconnect()),
                capacity(p.getCapacity()),
                priority(p.getPriority()),
                p.hasCheckpoint() ? new CheckpointPolicy(unsigned(p.getCheckpoint().getIntervalSeconds(),
                        "spec.checkpoint.interval_seconds"), blankToNull(p.getCheckpoint().getLocation())) : null,
                unsignedLong(p.getRuntimeEstimateSeconds(), "spec.runtime_estimate_seconds"),
                p.hasDeadline() ? instant(p.getDeadline(), "spec.deadline") : null,
                unsignedLong(p.getPriceCeilingMicrosPerHour(), "spec.price_ceiling_micros_per_hour"),
                p.getCommandList(),
                p.getEnvMap(),
                p.getSecretEnvMap(),
                unsignedLong(p.getTimeLimitSeconds(), "spec.time_limit_seconds"),
                dependencies(p.getAfterList()));
    }

    /** The array a submission asks for, checked ({@link JobArrays#plan}). */
    static JobArrays.Plan toArray(dev.gpucloud.contracts.grpc.v1.JobArray a) {
        List<JobArrays.Parameter> parameters = new java.util.ArrayList<>();
        a.getParametersList().forEach(p -> parameters.add(new JobArrays.Parameter(p.getName(), p.getValuesList())));
        return JobArrays.plan(Integer.toUnsignedLong(a.getCount()), parameters);
    }

    private static List<JobSpec.Dependency> dependencies(List<dev.gpucloud.contracts.grpc.v1.Dependency> after) {
        List<JobSpec.Dependency> out = new java.util.ArrayList<>(after.size());
        for (int i = 0; i < after.size(); i++) {
            dev.gpucloud.contracts.grpc.v1.Dependency d = after.get(i);
            boolean onAny = switch (d.getOn()) {
                case DEPENDENCY_CONDITION_UNSPECIFIED, AFTER_SUCCESS -> false;
                case AFTER_ANY -> true;
                case UNRECOGNIZED -> throw new IllegalArgumentException("field 'spec.after[" + i
                        + "].on' has an unknown value");
            };
            if (d.getJobId().isEmpty()) {
                throw new IllegalArgumentException("field 'spec.after[" + i + "].job_id' must not be empty");
            }
            out.add(new JobSpec.Dependency(d.getJobId(), onAny));
        }
        return out;
    }

    static Job toProto(JobView v) {
        Job.Builder b = Job.newBuilder()
                .setJobId(v.jobId())
                .setTenant(v.tenant())
                .setClientRequestId(v.clientRequestId())
                .setState(state(v.state()))
                .setReason(v.reason() == null ? "" : v.reason())
                .setSubmittedAt(timestamp(v.submittedAt()))
                .setUpdatedAt(timestamp(v.updatedAt()))
                .setResumeFrom(v.resumeFrom() == null ? "" : v.resumeFrom())
                .setExitCode(v.exitCode() == null ? 0 : v.exitCode());
        if (v.spec() != null) { // null: a stored spec the scheduler cannot read (the job is FAILED for it)
            b.setSpec(toProto(v.spec()));
        }
        v.placement().forEach(p -> b.addPlacement(toProto(p)));
        if (v.arrayId() != null) {
            b.setArrayId(v.arrayId()).setArrayIndex(v.arrayIndex() == null ? 0 : v.arrayIndex());
        }
        return b.build();
    }

    static JobEvent toProto(dev.gpucloud.contracts.events.JobEvent e) {
        JobEvent.Builder b = JobEvent.newBuilder()
                .setJobId(e.jobId())
                .setState(state(e.state()))
                .setReason(e.reason() == null ? "" : e.reason())
                .setAt(timestamp(e.occurredAt()));
        e.placement().forEach(p -> b.addPlacement(toProto(p)));
        return b.build();
    }

    static JobEvent currentAsEvent(JobView v) {
        return toProto(new dev.gpucloud.contracts.events.JobEvent(v.jobId(), v.tenant(), v.state(), v.reason(),
                v.updatedAt(), v.placement(), v.resumeFrom()));
    }

    static dev.gpucloud.contracts.grpc.v1.WorkerPlacement toProto(WorkerPlacement p) {
        return dev.gpucloud.contracts.grpc.v1.WorkerPlacement.newBuilder()
                .setRank(p.rank()).setNodeId(p.nodeId()).addAllGpuIndices(p.gpuIndices())
                .setAllocationId(p.allocationId()).setMigInstance(p.migInstance() == null ? "" : p.migInstance()).build();
    }

    /** The spec as a client may read it: the secret variables' names, each value {@value JobSpec#REDACTED}. */
    static dev.gpucloud.contracts.grpc.v1.JobSpec toProto(JobSpec s) {
        dev.gpucloud.contracts.grpc.v1.JobSpec.Builder b = dev.gpucloud.contracts.grpc.v1.JobSpec.newBuilder()
                .setName(s.name())
                .setWorkers(s.workers())
                .setGpusPerWorker(s.gpusPerWorker())
                .setMigProfile(s.migProfile() == null ? "" : s.migProfile())
                .setMilliGpu(s.milliGpu())
                .setCpuMillisPerWorker(s.cpuMillisPerWorker())
                .setMemoryMibPerWorker(s.memoryMibPerWorker())
                .addAllGpuModels(s.gpuModels())
                .setMinGpuMemoryMib(s.minGpuMemoryMib())
                .setInterconnect(switch (s.interconnect()) {
                    case NONE -> dev.gpucloud.contracts.grpc.v1.Interconnect.INTERCONNECT_NONE;
                    case NVLINK -> dev.gpucloud.contracts.grpc.v1.Interconnect.INTERCONNECT_NVLINK;
                    case RDMA -> dev.gpucloud.contracts.grpc.v1.Interconnect.INTERCONNECT_RDMA;
                })
                .setCapacity(switch (s.capacity()) {
                    case ON_DEMAND -> dev.gpucloud.contracts.grpc.v1.CapacityPreference.CAPACITY_ON_DEMAND;
                    case SPOT -> dev.gpucloud.contracts.grpc.v1.CapacityPreference.CAPACITY_SPOT;
                    case SPOT_PREFERRED -> dev.gpucloud.contracts.grpc.v1.CapacityPreference.CAPACITY_SPOT_PREFERRED;
                })
                .setPriority(switch (s.priority()) {
                    case LOW -> dev.gpucloud.contracts.grpc.v1.PriorityClass.PRIORITY_LOW;
                    case NORMAL -> dev.gpucloud.contracts.grpc.v1.PriorityClass.PRIORITY_NORMAL;
                    case HIGH -> dev.gpucloud.contracts.grpc.v1.PriorityClass.PRIORITY_HIGH;
                })
                .setCheckpoint(dev.gpucloud.contracts.grpc.v1.CheckpointPolicy.newBuilder()
                        .setIntervalSeconds(s.checkpoint().intervalSeconds())
                        .setLocation(s.checkpoint().location() == null ? "" : s.checkpoint().location()))
                .setRuntimeEstimateSeconds(s.runtimeEstimateSeconds())
                .setPriceCeilingMicrosPerHour(s.priceCeilingMicrosPerHour())
                .addAllCommand(s.command())
                .putAllEnv(s.env())
                .putAllSecretEnv(JobSpec.redact(s.secretEnv()))
                .setTimeLimitSeconds(s.timeLimitSeconds());
        for (JobSpec.Dependency d : s.after()) {
            b.addAfter(dev.gpucloud.contracts.grpc.v1.Dependency.newBuilder().setJobId(d.jobId())
                    .setOn(d.onAny() ? dev.gpucloud.contracts.grpc.v1.DependencyCondition.AFTER_ANY
                            : dev.gpucloud.contracts.grpc.v1.DependencyCondition.AFTER_SUCCESS));
        }
        if (s.deadline() != null) {
            b.setDeadline(timestamp(s.deadline()));
        }
        return b.build();
    }

    static dev.gpucloud.contracts.grpc.v1.JobState state(JobState s) {
        return dev.gpucloud.contracts.grpc.v1.JobState.valueOf(s.name());
    }

    static JobState state(dev.gpucloud.contracts.grpc.v1.JobState s, String field) {
        if (s == dev.gpucloud.contracts.grpc.v1.JobState.JOB_STATE_UNSPECIFIED
                || s == dev.gpucloud.contracts.grpc.v1.JobState.UNRECOGNIZED) {
            throw new IllegalArgumentException("field '" + field + "' has an unknown job state");
        }
        return JobState.valueOf(s.name());
    }

    /** A chunk of job.logs as StreamLogs sends it, with the lines the call shows of it. */
    static dev.gpucloud.contracts.grpc.v1.LogChunk toProto(dev.gpucloud.contracts.events.JobLogChunk chunk,
            List<dev.gpucloud.contracts.events.JobLogChunk.Line> lines) {
        dev.gpucloud.contracts.grpc.v1.LogChunk.Builder b = dev.gpucloud.contracts.grpc.v1.LogChunk.newBuilder()
                .setJobId(chunk.jobId()).setAllocationId(chunk.allocationId()).setRank(chunk.rank())
                .setStream(chunk.stream() == dev.gpucloud.contracts.events.JobLogChunk.Stream.STDOUT
                        ? dev.gpucloud.contracts.grpc.v1.LogStream.LOG_STDOUT
                        : dev.gpucloud.contracts.grpc.v1.LogStream.LOG_STDERR)
                .setNodeId(chunk.nodeId()).setEnd(chunk.end());
        for (dev.gpucloud.contracts.events.JobLogChunk.Line l : lines) {
            b.addLines(dev.gpucloud.contracts.grpc.v1.LogLine.newBuilder().setAt(timestamp(l.at())).setText(l.text())
                    .setContinued(l.continued()).setOffset(l.offset()).setDroppedLines(l.droppedLines())
                    .setDroppedBytes(l.droppedBytes()));
        }
        return b.build();
    }

    static Timestamp timestamp(Instant t) {
        return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
    }

    /** protobuf's Timestamp range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z. */
    private static final long MIN_SECONDS = -62_135_596_800L;
    private static final long MAX_SECONDS = 253_402_300_799L;

    /** A Timestamp a client sent; outside protobuf's range, or with nanos outside 0..999999999, it names the field. */
    static Instant instant(Timestamp t, String field) {
        if (t.getSeconds() < MIN_SECONDS || t.getSeconds() > MAX_SECONDS) {
            throw new IllegalArgumentException("field '" + field + "' has seconds " + t.getSeconds()
                    + ", outside 0001-01-01..9999-12-31");
        }
        if (t.getNanos() < 0 || t.getNanos() > 999_999_999) {
            throw new IllegalArgumentException("field '" + field + "' has nanos " + t.getNanos()
                    + ", outside 0..999999999");
        }
        return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
    }

    private static Interconnect interconnect(dev.gpucloud.contracts.grpc.v1.Interconnect i) {
        return switch (i) {
            case INTERCONNECT_UNSPECIFIED, INTERCONNECT_NONE -> Interconnect.NONE;
            case INTERCONNECT_NVLINK -> Interconnect.NVLINK;
            case INTERCONNECT_RDMA -> Interconnect.RDMA;
            case UNRECOGNIZED -> throw new IllegalArgumentException("field 'spec.interconnect' has an unknown value");
        };
    }

    private static CapacityPreference capacity(dev.gpucloud.contracts.grpc.v1.CapacityPreference c) {
        return switch (c) {
            case CAPACITY_PREFERENCE_UNSPECIFIED, CAPACITY_ON_DEMAND -> CapacityPreference.ON_DEMAND;
            case CAPACITY_SPOT -> CapacityPreference.SPOT;
            case CAPACITY_SPOT_PREFERRED -> CapacityPreference.SPOT_PREFERRED;
            case UNRECOGNIZED -> throw new IllegalArgumentException("field 'spec.capacity' has an unknown value");
        };
    }

    private static PriorityClass priority(dev.gpucloud.contracts.grpc.v1.PriorityClass p) {
        return switch (p) {
            case PRIORITY_CLASS_UNSPECIFIED, PRIORITY_NORMAL -> PriorityClass.NORMAL;
            case PRIORITY_LOW -> PriorityClass.LOW;
            case PRIORITY_HIGH -> PriorityClass.HIGH;
            case UNRECOGNIZED -> throw new IllegalArgumentException("field 'spec.priority' has an unknown value");
        };
    }

    /** proto3 uint32 arrives as a signed int: values over 2^31 would read negative. */
    private static int unsigned(int value, String field) {
        if (value < 0) {
            throw new IllegalArgumentException("field '" + field + "' is too large: " + Integer.toUnsignedString(value));
        }
        return value;
    }

    private static long unsignedLong(long value, String field) {
        if (value < 0) {
            throw new IllegalArgumentException("field '" + field + "' is too large: " + Long.toUnsignedString(value));
        }
        return value;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    static List<JobState> states(List<dev.gpucloud.contracts.grpc.v1.JobState> states) {
        return states.stream().map(s -> state(s, "states")).toList();
    }
}
