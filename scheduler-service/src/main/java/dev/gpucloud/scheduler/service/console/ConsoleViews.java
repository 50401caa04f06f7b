package dev.gpucloud.scheduler.service.console;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.WorkerPlacement;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot;
import dev.gpucloud.scheduler.service.engine.JobView;
import io.quarkus.qute.TemplateData;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What the console's templates show, as plain text: the templates escape every value, so nothing here is HTML. A
 * state is shown by its enum name, so a state added to the contract appears without a change here.
 */
final class ConsoleViews {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'")
            .withZone(ZoneOffset.UTC);

    private ConsoleViews() {
    }

    /** One row of the jobs list. */
    @TemplateData
    record JobRow(String id, String name, String state, String why, String shape, String submitted, String updated) {
        static JobRow of(JobView job) {
            return new JobRow(job.jobId(), ConsoleViews.name(job), job.state().name(), job.reason(),
                    ConsoleViews.shape(job.spec()),
                    time(job.submittedAt()), time(job.updatedAt()));
        }
    }

    /** One worker's place: rank, host, GPUs and MIG instance. */
    @TemplateData
    record PlacementRow(int rank, String host, String gpus, String mig, String allocation) {
        static PlacementRow of(WorkerPlacement w) {
            return new PlacementRow(w.rank(), w.nodeId(), w.gpuIndices().stream().map(String::valueOf)
                    .collect(Collectors.joining(", ")), w.migInstance() == null ? "" : w.migInstance(),
                    w.allocationId());
        }
    }

    /** One GPU the job holds, as the scheduler's model of its host has it. */
    @TemplateData
    record GpuRow(String host, int index, String model, long memoryMib, String use, int holders) {
        static GpuRow of(String host, ClusterSnapshot.GpuView g) {
            String use = g.mig() ? g.migSlicesUsed() + "/" + g.migSlices() + " MIG memory slices in use"
                    : g.usedMilli() + "/1000 milli-GPU allocated";
            return new GpuRow(host, g.index(), g.model(), g.memoryMib(), use, g.holders().size());
        }
    }

    /** One host the job runs on: its health as the scheduler last heard it. */
    @TemplateData
    record HostRow(String host, String hostname, String instanceType, String zone, String capacity, boolean healthy,
            String lastSeen, String cordon) {
        static HostRow of(ClusterSnapshot.NodeView n) {
            return new HostRow(n.nodeId(), n.hostname(), n.instanceType(), n.zone(), String.valueOf(n.capacityType()),
                    n.healthy(), n.lastSeen().equals(Instant.EPOCH) ? "never" : time(n.lastSeen()),
                    n.cordonReason() == null ? "" : n.cordonReason());
        }
    }

    /** A label and a value of a job's spec. */
    @TemplateData
    record Field(String label, String value) {
    }

    /** The spec as label/value pairs; secret variables show their names only. */
    static List<Field> specFields(JobView job) {
        JobSpec s = job.spec();
        if (s == null) {
            return List.of(new Field("spec", "(cannot be read)"));
        }
        List<Field> fields = new java.util.ArrayList<>();
        fields.add(new Field("workers", shape(s)));
        fields.add(new Field("CPU / memory per worker", s.cpuMillisPerWorker() + " milli-CPU, "
                + s.memoryMibPerWorker() + " MiB"));
        fields.add(new Field("GPU models", s.gpuModels().isEmpty() ? "any" : String.join(", ", s.gpuModels())));
        if (s.minGpuMemoryMib() > 0) {
            fields.add(new Field("minimum GPU memory", s.minGpuMemoryMib() + " MiB"));
        }
        fields.add(new Field("interconnect", String.valueOf(s.interconnect())));
        fields.add(new Field("capacity", String.valueOf(s.capacity())));
        fields.add(new Field("priority", String.valueOf(s.priority())));
        if (s.runtimeEstimateSeconds() > 0) {
            fields.add(new Field("runtime estimate", s.runtimeEstimateSeconds() + " s"));
        }
        if (s.deadline() != null) {
            fields.add(new Field("deadline", time(s.deadline())));
        }
        fields.add(new Field("command", String.join(" ", s.command())));
        if (!s.secretEnv().isEmpty()) {
            fields.add(new Field("secret variables", String.join(", ", new java.util.TreeSet<>(s.secretEnv().keySet()))));
        }
        return fields;
    }

    static String name(JobView job) {
        return job.spec() == null || job.spec().name() == null ? "" : job.spec().name();
    }

    /** {@code 2 × 8 GPU}, {@code 1 × 3g.40gb}, {@code 4 × 0.250 GPU}. */
    static String shape(JobSpec s) {
        if (s == null) {
            return "?";
        }
        String each;
        if (s.migProfile() != null && !s.migProfile().isEmpty()) {
            each = s.migProfile();
        } else if (s.milliGpu() > 0) {
            each = String.format(java.util.Locale.ROOT, "%.3f GPU", s.milliGpu() / 1000.0);
        } else {
            each = s.gpusPerWorker() + " GPU";
        }
        return s.workers() + " \u00d7 " + each;
    }

    static String time(Instant at) {
        return at == null ? "" : TIME.format(at);
    }
}
