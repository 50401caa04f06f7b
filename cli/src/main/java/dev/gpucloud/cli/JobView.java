package dev.gpucloud.cli;

import com.google.protobuf.Timestamp;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.WorkerPlacement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** One job as {@code gpucloud get} shows it: what was asked, where it runs, why it is in its state, and when. */
final class JobView {

    private JobView() {
    }

    /** The job as aligned "field  value" lines; fields with nothing to say are left out. */
    static String text(Job job) {
        List<String[]> rows = new ArrayList<>();
        rows.add(row("job", job.getJobId()));
        rows.add(row("tenant", job.getTenant()));
        rows.add(row("name", job.getSpec().getName()));
        rows.add(row("state", job.getState().name()));
        rows.add(row("reason", job.getReason()));
        rows.add(row("array", job.getArrayId().isEmpty() ? "" : job.getArrayId() + "[" + job.getArrayIndex() + "]"));
        rows.add(row("after", job.getSpec().getAfterList().stream()
                .map(d -> JobFileFields.describe(d.getJobId(), d.getOn())).collect(Collectors.joining(", "))));
        rows.add(row("asks", asks(job.getSpec())));
        rows.add(row("command", String.join(" ", job.getSpec().getCommandList())));
        // the scheduler sends secret variables' names only; their values stay with the workers
        rows.add(row("secret env", String.join(", ", new java.util.TreeSet<>(job.getSpec().getSecretEnvMap().keySet()))));
        if (job.getPlacementCount() == 0) {
            rows.add(row("placement", "none yet"));
        }
        String label = "placement";
        for (WorkerPlacement p : job.getPlacementList()) {
            rows.add(row(label, worker(p)));
            label = "";
        }
        rows.add(row("submitted", time(job.getSubmittedAt())));
        rows.add(row("updated", time(job.getUpdatedAt())));
        rows.add(row("resume from", job.getResumeFrom()));
        if (job.getState().name().equals("SUCCEEDED") || job.getState().name().equals("FAILED")) {
            rows.add(row("exit code", String.valueOf(job.getExitCode())));
        }
        StringBuilder out = new StringBuilder();
        for (String[] r : rows) {
            if (!r[1].isEmpty()) {
                out.append(String.format("%-12s %s%n", r[0], r[1]));
            }
        }
        return out.toString();
    }

    /** "2 workers x 8 GPUs (A100-SXM4-40GB), rdma, on-demand, normal priority". */
    static String asks(JobSpec spec) {
        StringBuilder s = new StringBuilder(each(spec));
        if (spec.getGpuModelsCount() > 0) {
            s.append(" (").append(String.join(" or ", spec.getGpuModelsList())).append(')');
        }
        s.append(", ").append(Choice.word(spec.getInterconnect().name().replace("INTERCONNECT_", "")))
                .append(", ").append(Choice.word(spec.getCapacity().name().replace("CAPACITY_", "")))
                .append(", ").append(Choice.word(spec.getPriority().name().replace("PRIORITY_", ""))).append(" priority");
        return s.toString();
    }

    /** "2 workers x 8 GPUs", "1 worker x MIG 1g.10gb", "4 workers x 250 milli-GPU". */
    static String each(JobSpec spec) {
        int workers = Math.max(1, spec.getWorkers());
        String each;
        if (!spec.getMigProfile().isEmpty()) {
            each = "MIG " + spec.getMigProfile();
        } else if (spec.getMilliGpu() > 0) {
            each = spec.getMilliGpu() + " milli-GPU";
        } else {
            each = spec.getGpusPerWorker() + (spec.getGpusPerWorker() == 1 ? " GPU" : " GPUs");
        }
        return workers + (workers == 1 ? " worker x " : " workers x ") + each;
    }

    /** "rank 0: sim-a100-0 GPUs [0, 1] (allocation a-1)". */
    static String worker(WorkerPlacement p) {
        return "rank " + p.getRank() + ": " + p.getNodeId() + " GPUs " + p.getGpuIndicesList()
                + (p.getMigInstance().isEmpty() ? "" : " MIG " + p.getMigInstance())
                + (p.getAllocationId().isEmpty() ? "" : " (allocation " + p.getAllocationId() + ")");
    }

    static String time(Timestamp t) {
        return t.getSeconds() == 0 && t.getNanos() == 0 ? "" : Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString();
    }

    private static String[] row(String field, String value) {
        return new String[] {field, value == null ? "" : value};
    }
}
