package dev.gpucloud.cli;

import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.Dependency;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobArray;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code gpucloud submit}: a job from flags or a job file, sent once per request id however often it is retried. */
@Command(name = "submit", description = "Submit a job; prints its id. Repeating a --request-id returns the first job.")
final class SubmitCommand extends GpucloudCli.Base {
    @Option(names = "--tenant", defaultValue = "", description = "Tenant id (default: the one your token"
            + " names).")
    String tenant;
    @Option(names = "--name", description = "Job name (default: the command's first word).")
    String name;
    @Option(names = "--gpus", defaultValue = "0", description = "Whole GPUs per worker.")
    int gpus;
    @Option(names = "--mig", description = "One MIG slice per worker, e.g. 1g.10gb.")
    String mig;
    @Option(names = "--milli-gpu", defaultValue = "0", description = "A share of one GPU per worker, 1..999.")
    int milliGpu;
    @Option(names = "--workers", defaultValue = "1")
    int workers;
    @Option(names = "--model", description = "Allowed GPU model (repeatable).")
    List<String> models = new ArrayList<>();
    @Option(names = "--interconnect", defaultValue = "none", converter = Choice.OfInterconnect.class,
            description = "none, nvlink or rdma (any case).")
    Interconnect interconnect;
    @Option(names = "--capacity", defaultValue = "on-demand", converter = Choice.OfCapacity.class,
            description = "on-demand, spot or spot-preferred (any case).")
    CapacityPreference capacity;
    @Option(names = "--priority", defaultValue = "normal", converter = Choice.OfPriority.class,
            description = "low, normal or high (any case).")
    PriorityClass priority;
    @Option(names = "--checkpoint-every", defaultValue = "0", description = "Checkpoint interval in seconds.")
    int checkpointEvery;
    @Option(names = "--checkpoint-to", description = "Checkpoint location.")
    String checkpointTo;
    @Option(names = "--estimate", defaultValue = "0", description = "Runtime estimate in seconds.")
    long estimate;
    @Option(names = "--time-limit", paramLabel = "DURATION", description = "The most running time over all its"
            + " attempts, e.g. 2h, 90m or 1h30m (or seconds): at it the job is asked to checkpoint (if it does) and"
            + " stopped, and ends FAILED saying so.")
    String timeLimit;
    @Option(names = "--env", description = "NAME=VALUE for the workers (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();
    @Option(names = "--secret-env", paramLabel = "NAME[=VALUE]", description = "A secret for the workers"
            + " (repeatable): only they see its value; the API shows '(secret)'. NAME alone takes the value of"
            + " your own environment variable NAME, so it stays out of your shell's history.")
    List<String> secretEnv = new ArrayList<>();
    @Option(names = "--cpu", paramLabel = "CORES", description = "CPU per worker: cores (4, 0.5) or millicores"
            + " (500m).")
    String cpu;
    @Option(names = "--memory", paramLabel = "SIZE", description = "Memory per worker, e.g. 64Gi or 512Mi.")
    String memory;
    @Option(names = "--min-gpu-memory", paramLabel = "SIZE", description = "Only GPUs with at least this much"
            + " memory, e.g. 40Gi.")
    String minGpuMemory;
    @Option(names = "--deadline", paramLabel = "TIME", description = "When the job must be done, ISO 8601 with"
            + " its offset (2026-12-24T18:00:00Z).")
    String deadline;
    @Option(names = "--price-ceiling", paramLabel = "USD", description = "The most the job may cost, US dollars"
            + " per job-hour (e.g. 12.50).")
    String priceCeiling;
    @Option(names = "--array", paramLabel = "N", description = "Submit N copies as one job array (1..10000), all or"
            + " none; each gets GPUCLOUD_ARRAY_INDEX (0-based), GPUCLOUD_ARRAY_COUNT and GPUCLOUD_ARRAY_ID.")
    Long arrayCount;
    @Option(names = "--array-param", paramLabel = "NAME=V1,V2,...", description = "A sweep (repeatable): one array"
            + " element per combination of the parameters' values (the last varying fastest), each with NAME set in"
            + " its env; --array, if given too, must be the product.")
    List<String> arrayParams = new ArrayList<>();
    @Option(names = "--after", paramLabel = "ID[:any]", description = "Run after this job or array (arr-...) has"
            + " succeeded, or with :any after it has ended at all (repeatable); it waits as WAITING_FOR_DEPENDENCIES.")
    List<String> after = new ArrayList<>();
    @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "The job, described in a YAML (or"
            + " .json) file: docs/jobspec.md. --tenant and --request-id still apply; the other flags do not.")
    java.nio.file.Path file;
    @Option(names = "--request-id", description = "Idempotency key (default: the file's request_id, else a new"
            + " random one).")
    String requestId;
    @Parameters(arity = "0..*", description = "The worker's command, e.g. sleep 20 (or the file's).")
    List<String> command = new ArrayList<>();
    /** text (a line a job or array), json or yaml (a list of what was submitted). */
    @CommandLine.Mixin
    Output output;

    /** The options that do not say what the job is: with -f, the file says that. */
    static final java.util.Set<String> FILE_SAYS = java.util.Set.of("--tenant", "--request-id", "--file", "--output",
            "--no-headers");

    @Override
    Integer run(LeaderFailover scheduler) {
        output.format(Output.Format.TEXT, Output.Format.JSON, Output.Format.YAML);
        JobSpec built;
        JobArray array = null;
        String fileTenant = "";
        String fileRequestId = null;
        if (file != null) {
            List<String> flags = this.spec.commandLine().getParseResult().matchedOptions().stream()
                    .map(o -> o.longestName()).filter(n -> !FILE_SAYS.contains(n)).toList();
            if (!flags.isEmpty() || !command.isEmpty()) {
                throw new CommandLine.ParameterException(this.spec.commandLine(), "the job is in " + file
                        + ": give it there, not also in " + (flags.isEmpty() ? "a command after the flags"
                        : String.join(", ", flags)) + " (only --tenant and --request-id go with -f)");
            }
            try {
                JobFile job = JobFile.read(file);
                fileTenant = job.tenant() == null ? "" : job.tenant();
                if (job.jobs() != null) {
                    return dag(scheduler, job, !tenant.isEmpty() ? tenant : fileTenant);
                }
                built = job.toSpec(System::getenv);
                array = job.array() == null ? null : job.array().value();
                fileRequestId = job.requestId();
            } catch (JobFile.Invalid e) {
                throw badFile(e);
            }
        } else {
            built = fromFlags();
            array = arrayFromFlags();
        }
        String who = !tenant.isEmpty() ? tenant : fileTenant;
        String id = requestId != null ? requestId : fileRequestId != null ? fileRequestId : UUID.randomUUID().toString();
        // one request id for every try: a retry after a lost answer returns the first job, never a second
        SubmitJobRequest.Builder request = SubmitJobRequest.newBuilder()
                .setTenant(who)
                .setClientRequestId(id)
                .setSpec(built);
        if (array != null) {
            request.setArray(array);
        }
        SubmitJobResponse response = send(scheduler, request.build());
        DagSubmission.Submitted submitted = new DagSubmission.Submitted(built.getName(), id, response);
        if (output.structured()) {
            print(List.of(submitted));
            return 0;
        }
        Job job = response.getJob();
        out().println((response.getArrayId().isEmpty() ? job.getJobId()
                : response.getArrayId() + " (" + response.getArrayCount() + " elements)")
                + (response.getDuplicate() ? " (already submitted)" : "") + "  " + job.getState() + "  "
                + job.getReason());
        return 0;
    }

    /** A file that says the wrong thing is bad input, as a wrong flag is: nothing is sent. */
    private CommandLine.ParameterException badFile(JobFile.Invalid e) {
        return new CommandLine.ParameterException(this.spec.commandLine(), e.getMessage()
                .startsWith(file.toString()) ? e.getMessage() : file + ": " + e.getMessage());
    }

    private static SubmitJobResponse send(LeaderFailover scheduler, SubmitJobRequest request) {
        try {
            return scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).submitJob(request));
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.DEADLINE_EXCEEDED) {
                throw e;
            }
            // the job may have been accepted: say which request id finds it again without a second job
            throw Status.DEADLINE_EXCEEDED.withDescription(e.getStatus().getDescription() + "; --request-id "
                    + request.getClientRequestId()).asRuntimeException();
        }
    }

    /** A DAG file: its jobs in order, a line each as it is accepted (or, for -o json|yaml, a list at the end). */
    private Integer dag(LeaderFailover scheduler, JobFile top, String who) throws JobFile.Invalid {
        List<DagFile.Node> order = DagFile.order(file.toString(), top);
        boolean generated = requestId == null && top.requestId() == null;
        String base = requestId != null ? requestId : top.requestId() != null ? top.requestId()
                : "dag-" + UUID.randomUUID();
        if (generated) {
            this.spec.commandLine().getErr().println("request id " + base + ": if this stops part-way, "
                    + "gpucloud submit -f " + file + " --request-id " + base + " goes on without duplicates");
            this.spec.commandLine().getErr().flush();
        }
        List<DagSubmission.Submitted> done;
        try {
            done = DagSubmission.submit(who, base, order, System::getenv, request -> send(scheduler, request), s -> {
                if (!output.structured()) {
                    SubmitJobResponse r = s.response();
                    out().println(s.id() + "  " + s.name() + "  " + r.getJob().getState()
                            + (r.getArrayId().isEmpty() ? "" : "  " + r.getArrayCount() + " elements")
                            + (r.getDuplicate() ? "  (already submitted)" : ""));
                    out().flush();
                }
            });
        } catch (DagSubmission.Stopped e) {
            Status status = e.cause.getStatus();
            throw status.withDescription(status.getDescription() + " (submitting '" + e.job + "', after "
                    + e.accepted + " of " + order.size() + " were accepted; run gpucloud submit -f " + file
                    + (generated ? " --request-id " + base : "") + " again to go on without duplicates)")
                    .asRuntimeException();
        }
        if (output.structured()) {
            print(done);
        }
        return 0;
    }

    /** What was submitted, as a list for scripts: name, id (the array's or job's), request id, state. */
    private void print(List<DagSubmission.Submitted> submitted) {
        com.fasterxml.jackson.databind.node.ArrayNode list = com.fasterxml.jackson.databind.node.JsonNodeFactory
                .instance.arrayNode();
        for (DagSubmission.Submitted s : submitted) {
            SubmitJobResponse r = s.response();
            com.fasterxml.jackson.databind.node.ObjectNode entry = list.addObject();
            entry.put("name", s.name());
            entry.put("id", s.id());
            entry.put("jobId", r.getJob().getJobId());
            entry.put("arrayId", r.getArrayId());
            entry.put("arrayCount", r.getArrayCount());
            entry.put("state", r.getJob().getState().name());
            entry.put("reason", r.getJob().getReason());
            entry.put("requestId", s.requestId());
            entry.put("duplicate", r.getDuplicate());
        }
        out().print(output.document(list));
        out().flush();
    }

    /** --array and --array-param: the array they ask for, or null for one job. */
    JobArray arrayFromFlags() {
        if (arrayCount == null && arrayParams.isEmpty()) {
            return null;
        }
        try {
            return JobArrays.of(arrayCount, arrayParams.isEmpty() ? null : JobArrays.parseFlags(arrayParams));
        } catch (JobArrays.Refused e) {
            String message = e.getMessage();
            throw new CommandLine.ParameterException(this.spec.commandLine(), message.startsWith("--") ? message
                    : (e.at.equals("count") ? "--array: " : "--array-param: ") + message);
        }
    }

    /** A flag's value read as the job file reads that field: the same units, the same words when wrong. */
    <T> T flag(String name, String value, java.util.function.Function<com.fasterxml.jackson.databind.JsonNode, T> of) {
        try {
            return of.apply(com.fasterxml.jackson.databind.node.TextNode.valueOf(value));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(this.spec.commandLine(), name + ": " + e.getMessage());
        }
    }

    JobSpec fromFlags() {
        if (command.isEmpty()) {
            throw new CommandLine.ParameterException(this.spec.commandLine(), "no command: give the worker's"
                    + " command after the flags (gpucloud submit --gpus 1 -- python train.py), or the job in a"
                    + " file with -f job.yaml");
        }
        if (gpus == 0 && mig == null && milliGpu == 0) {
            gpus = 1;
        }
        JobSpec.Builder spec = JobSpec.newBuilder()
                .setName(name != null ? name : command.get(0))
                .setWorkers(workers)
                .setGpusPerWorker(gpus)
                .setMilliGpu(milliGpu)
                .addAllGpuModels(models)
                .setInterconnect(interconnect)
                .setCapacity(capacity)
                .setPriority(priority)
                .setRuntimeEstimateSeconds(estimate)
                .addAllCommand(command)
                .putAllEnv(env)
                .putAllSecretEnv(secrets(secretEnv, System::getenv, this.spec.commandLine()));
        if (mig != null) {
            spec.setMigProfile(mig);
        }
        if (checkpointEvery > 0 || checkpointTo != null) {
            spec.setCheckpoint(CheckpointPolicy.newBuilder().setIntervalSeconds(checkpointEvery)
                    .setLocation(checkpointTo == null ? "" : checkpointTo));
        }
        if (cpu != null) {
            spec.setCpuMillisPerWorker(flag("--cpu", cpu, JobFile.Cpu::of).millis());
        }
        if (memory != null) {
            spec.setMemoryMibPerWorker(flag("--memory", memory, JobFile.Mebibytes::of).mib());
        }
        if (minGpuMemory != null) {
            spec.setMinGpuMemoryMib(flag("--min-gpu-memory", minGpuMemory, JobFile.Mebibytes::of).mib());
        }
        if (deadline != null) {
            java.time.Instant at = flag("--deadline", deadline, JobFile.When::of).at();
            spec.setDeadline(com.google.protobuf.Timestamp.newBuilder().setSeconds(at.getEpochSecond())
                    .setNanos(at.getNano()));
        }
        if (timeLimit != null) {
            // a bare number is seconds, as in a job file
            spec.setTimeLimitSeconds(flag("--time-limit", timeLimit, n -> JobFile.Seconds.of(
                    timeLimit.matches("\\d{1,12}") ? com.fasterxml.jackson.databind.node.LongNode.valueOf(
                            Long.parseLong(timeLimit)) : n)).seconds());
        }
        if (priceCeiling != null) {
            spec.setPriceCeilingMicrosPerHour(flag("--price-ceiling", priceCeiling, JobFile.Usd::of).micros());
        }
        for (String dependency : after) {
            try {
                JobFileFields.After a = JobFileFields.afterFlag(dependency);
                spec.addAfter(Dependency.newBuilder().setJobId(a.job()).setOn(a.on()));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(this.spec.commandLine(), "--after " + GpucloudCli.clip(
                        dependency, 64) + ": " + e.getMessage() + " (ID, or ID:any)");
            }
        }
        return spec.build();
    }

    /**
     * The --secret-env values: NAME=VALUE, or NAME for the submitter's own variable NAME. A mistake names the
     * variable, never its value.
     */
    static Map<String, String> secrets(List<String> specs, java.util.function.Function<String, String> environment,
            CommandLine command) {
        Map<String, String> secrets = new LinkedHashMap<>();
        for (String spec : specs) {
            int eq = spec.indexOf('=');
            String name = eq < 0 ? spec : spec.substring(0, eq);
            if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new CommandLine.ParameterException(command, "--secret-env needs"
                        + " NAME or NAME=VALUE with NAME a variable name ([A-Za-z_][A-Za-z0-9_]*), was '"
                        + GpucloudCli.clip(name, 64) + "'");
            }
            String value = eq < 0 ? environment.apply(name) : spec.substring(eq + 1);
            if (value == null) {
                throw new CommandLine.ParameterException(command, "--secret-env " + name
                        + ": your environment has no variable " + name + " (export it, or give NAME=VALUE)");
            }
            if (secrets.put(name, value) != null) {
                throw new CommandLine.ParameterException(command, "--secret-env " + name
                        + " is given twice");
            }
        }
        return secrets;
    }
}
