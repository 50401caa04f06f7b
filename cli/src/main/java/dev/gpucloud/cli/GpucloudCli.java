package dev.gpucloud.cli;

import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.client.SchedulerUnavailableException;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.Capacity;
import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.CordonNodeRequest;
import dev.gpucloud.contracts.grpc.v1.DrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.TenantUsage;
import dev.gpucloud.contracts.paging.NodePages;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.NodeDrainResponse;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.UndrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.contracts.grpc.v1.WorkerPlacement;
import dev.gpucloud.identity.BearerToken;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The gpucloud command line: talks to the scheduler's gRPC API. Every call goes through
 * {@link LeaderFailover}, so a standby or a stopped instance in the --scheduler list only moves it.
 */
@Command(name = "gpucloud", mixinStandardHelpOptions = true, version = "gpucloud 0.1",
        description = "Submit, follow and cancel GPU jobs; look at the fleet.",
        subcommands = {GpucloudCli.Submit.class, GpucloudCli.Jobs.class, GpucloudCli.Get.class,
                GpucloudCli.Watch.class, GpucloudCli.Cancel.class, GpucloudCli.Nodes.class,
                GpucloudCli.CapacityCommand.class, GpucloudCli.Usage.class, GpucloudCli.Cordon.class,
                GpucloudCli.Drain.class, GpucloudCli.Undrain.class, Identity.Login.class, Identity.WhoAmI.class,
                Identity.Logout.class, Identity.Issuer.class, AuditTrailCommand.class, InvoiceCommands.class,
                TraceCommand.class})
public class GpucloudCli {

    @Option(names = "--scheduler", defaultValue = "${env:GPUCLOUD_SCHEDULER:-localhost:8081}",
            paramLabel = "HOST:PORT[,...]",
            description = "Scheduler gRPC address, or several comma-separated (one leader, the rest standbys);"
                    + " default: ${DEFAULT-VALUE}; env GPUCLOUD_SCHEDULER.")
    String scheduler;
    @Option(names = "--ca-file", paramLabel = "PEM", defaultValue = "${env:GPUCLOUD_CA_FILE}",
            description = "Speak TLS to the scheduler, trusting the certificate authority in this PEM file (the stack"
                    + " ./gpucloud up starts: .run/tls/ca.pem, which ./gpucloud passes); without it, plaintext."
                    + " Env GPUCLOUD_CA_FILE.")
    java.nio.file.Path caFile;

    @Option(names = "--profile", defaultValue = "${env:GPUCLOUD_PROFILE:-default}", paramLabel = "NAME",
            description = "Whose token to send: the one ./gpucloud login stored for this profile (default:"
                    + " ${DEFAULT-VALUE}; env GPUCLOUD_PROFILE; GPUCLOUD_TOKEN overrides).")
    String profile;

    @Option(names = "--failover-timeout", defaultValue = "30", paramLabel = "SECONDS",
            description = "How long a call may keep moving between scheduler instances (a standby, one that is"
                    + " down) before it gives up (default: ${DEFAULT-VALUE} s).")
    double failoverTimeout;

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Runs the CLI. A mistyped option is one line on stderr and exit 2; a gRPC error prints its
     * status and message, an unreachable scheduler says which address was tried, and either exits 1.
     * Nothing prints a stack trace.
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        GpucloudCli root = new GpucloudCli();
        CommandLine cli = new CommandLine(root);
        helpEverywhere(cli);
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, ignored) -> {
            err.println("error: " + firstLine(e.getMessage()) + " (see "
                    + e.getCommandLine().getCommandSpec().qualifiedName() + " --help)");
            err.flush();
            return 2;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            err.println("error: " + describe(e, root.scheduler));
            err.flush();
            return 1;
        });
        int code = cli.execute(args);
        out.flush();
        return code;
    }

    /** -h and --help on every command ("gpucloud submit --help", as the errors say), not the top one alone. */
    static void helpEverywhere(CommandLine command) {
        for (CommandLine sub : command.getSubcommands().values()) {
            if (!sub.getCommandSpec().mixinStandardHelpOptions()) {
                sub.getCommandSpec().mixinStandardHelpOptions(true);
            }
            helpEverywhere(sub);
        }
    }

    /** One line that says what went wrong and, where the scheduler could not be reached, what to do. */
    static String describe(Exception e, String scheduler) {
        if (e instanceof SchedulerUnavailableException gaveUp) {
            Status last = gaveUp.lastStatus();
            if (gaveUp.noneReachable()) {
                return "cannot reach the scheduler at " + scheduler + " (" + unreachable(last) + "); start the stack"
                        + " with ./gpucloud up, or point --scheduler (env GPUCLOUD_SCHEDULER) at a running one";
            }
            return String.format(Locale.ROOT, "no scheduler at %s took the call within %.1f s (last, from %s: %s);"
                    + " ./gpucloud status shows each instance's role, --failover-timeout waits longer", scheduler,
                    gaveUp.spent().toMillis() / 1000.0, gaveUp.lastAddress(), unreachable(last));
        }
        if (e instanceof Oidc.Failure failure) {
            return failure.getMessage();
        }
        if (e instanceof AuditTrailCommand.BrokerProblem broker) {
            return broker.getMessage();
        }
        if (e instanceof TraceCommand.Problem trace) {
            return trace.getMessage();
        }
        if (e instanceof BillingApi.Failure billing) {
            return billing.getMessage();
        }
        if (e instanceof StatusRuntimeException sre) {
            Status status = sre.getStatus();
            if (status.getCode() == Status.Code.UNAVAILABLE) {
                return "cannot reach the scheduler at " + scheduler + " (" + unreachable(status) + "); start the stack with"
                        + " ./gpucloud up, or point --scheduler (env GPUCLOUD_SCHEDULER) at a running one";
            }
            return status.getCode() + ": " + firstLine(String.valueOf(status.getDescription()));
        }
        return e.getClass().getSimpleName() + ": " + firstLine(String.valueOf(e.getMessage()));
    }

    /** Why a channel could not connect, in the words of the socket error rather than Netty's. */
    static String unreachable(Status status) {
        return LeaderFailover.unreachable(status).orElseGet(() -> firstLine(String.valueOf(status.getDescription())));
    }

    static String firstLine(String text) {
        return text.lines().findFirst().orElse("").strip();
    }

    /** The scheduler instances of --scheduler; each move is one line on stderr. */
    LeaderFailover failover(PrintWriter err) {
        if (!(failoverTimeout >= 0)) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--failover-timeout must be a number of seconds >= 0, was " + failoverTimeout);
        }
        List<String> addresses;
        try {
            addresses = LeaderFailover.parseAddresses(scheduler);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--scheduler: " + e.getMessage());
        }
        // TLS, trusting the stack's own CA only, where one is named
        ChannelCredentials credentials = caFile == null ? null : tls(caFile);
        // every call carries the profile's token; without one the scheduler answers UNAUTHENTICATED with a hint
        // (refreshed first where it has expired and the device flow left a refresh token)
        Optional<BearerToken> token = Identity.token(profile, caFile, err).map(BearerToken::new);
        return new LeaderFailover(addresses, Duration.ofMillis((long) (failoverTimeout * 1000)), line -> {
            err.println(line);
            err.flush();
        }, address -> {
            ManagedChannelBuilder<?> channel = caFile == null
                    ? ManagedChannelBuilder.forTarget(address).usePlaintext()
                    : Grpc.newChannelBuilder(address, credentials);
            token.ifPresent(t -> channel.intercept(t.interceptor()));
            return channel.build();
        }, LeaderFailover.Clock.system());
    }

    /** TLS that trusts only the certificate authority in {@code pem}. */
    ChannelCredentials tls(java.nio.file.Path pem) {
        try {
            return TlsChannelCredentials.newBuilder().trustManager(pem.toFile()).build();
        } catch (java.io.IOException | RuntimeException e) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--ca-file: cannot read a PEM certificate from " + pem + " (" + firstLine(String.valueOf(e.getMessage()))
                            + ")");
        }
    }

    abstract static class Base implements Callable<Integer> {
        @CommandLine.ParentCommand
        GpucloudCli parent;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        PrintWriter out() {
            return spec.commandLine().getOut();
        }

        @Override
        public Integer call() throws Exception {
            try (LeaderFailover scheduler = parent.failover(spec.commandLine().getErr())) {
                return run(scheduler);
            }
        }

        abstract Integer run(LeaderFailover scheduler) throws Exception;
    }

    @Command(name = "submit", description = "Submit a job; prints its id. Repeating a --request-id returns the first job.")
    static class Submit extends Base {
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
        @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "The job, described in a YAML (or"
                + " .json) file: docs/jobspec.md. --tenant and --request-id still apply; the other flags do not.")
        java.nio.file.Path file;
        @Option(names = "--request-id", description = "Idempotency key (default: the file's request_id, else a new"
                + " random one).")
        String requestId;
        @Parameters(arity = "0..*", description = "The worker's command, e.g. sleep 20 (or the file's).")
        List<String> command = new ArrayList<>();

        /** The options that say what the job is; with -f the file says it. */
        static final java.util.Set<String> FILE_SAYS = java.util.Set.of("--tenant", "--request-id", "--file");

        @Override
        Integer run(LeaderFailover scheduler) {
            JobSpec built;
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
                    built = job.toSpec(System::getenv);
                    fileTenant = job.tenant() == null ? "" : job.tenant();
                    fileRequestId = job.requestId();
                } catch (JobFile.Invalid e) {
                    // a file that says the wrong thing is bad input, as a wrong flag is: nothing is sent
                    throw new CommandLine.ParameterException(this.spec.commandLine(), e.getMessage()
                            .startsWith(file.toString()) ? e.getMessage() : file + ": " + e.getMessage());
                }
            } else {
                built = fromFlags();
            }
            String who = !tenant.isEmpty() ? tenant : fileTenant;
            String id = requestId != null ? requestId : fileRequestId != null ? fileRequestId : UUID.randomUUID().toString();
            // one request id for every try: a retry after a lost answer returns the first job, never a second
            SubmitJobRequest request = SubmitJobRequest.newBuilder()
                    .setTenant(who)
                    .setClientRequestId(id)
                    .setSpec(built)
                    .build();
            SubmitJobResponse response = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).submitJob(request));
            Job job = response.getJob();
            out().println(job.getJobId() + (response.getDuplicate() ? " (already submitted)" : "") + "  "
                    + job.getState() + "  " + job.getReason());
            return 0;
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
            if (priceCeiling != null) {
                spec.setPriceCeilingMicrosPerHour(flag("--price-ceiling", priceCeiling, JobFile.Usd::of).micros());
            }
            return spec.build();
        }
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
                        + clip(name, 64) + "'");
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

    @Command(name = "jobs", description = "List jobs, newest first.")
    static class Jobs extends Base {
        @Option(names = "--tenant", defaultValue = "", description = "Only this tenant's jobs.")
        String tenant;
        @Option(names = "--state", converter = Choice.OfJobState.class,
                description = "Only jobs in this state (repeatable; pending, scheduled, running, ..., any case).")
        List<JobState> states = new ArrayList<>();
        @Option(names = "--limit", defaultValue = "50")
        int limit;

        @Override
        Integer run(LeaderFailover scheduler) {
            String token = "";
            int shown = 0;
            boolean header = false;
            do {
                ListJobsRequest request = ListJobsRequest.newBuilder().setTenant(tenant)
                        .addAllStates(states).setPageSize(Math.min(limit - shown, 100)).setPageToken(token).build();
                ListJobsResponse page = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).listJobs(request));
                if (!header) {
                    out().printf("%-16s %-10s %-12s %-10s %-40s %s%n", "JOB", "TENANT", "NAME", "STATE", "PLACEMENT",
                            "REASON");
                    header = true;
                }
                for (Job job : page.getJobsList()) {
                    out().printf("%-16s %-10s %-12s %-10s %-40s %s%n", job.getJobId(), job.getTenant(),
                            clip(job.getSpec().getName(), 12), job.getState(), placement(job.getPlacementList()),
                            job.getReason());
                    shown++;
                }
                token = page.getNextPageToken();
            } while (!token.isEmpty() && shown < limit);
            return 0;
        }
    }

    @Command(name = "get", description = "Show one job: what it asks, its state and why, where it runs, when.")
    static class Get extends Base {
        @Parameters(index = "0", description = "Job id.")
        String jobId;
        @Option(names = {"-o", "--output"}, defaultValue = "text", converter = Choice.OfOutput.class,
                description = "text, or json (protobuf's JSON mapping of the Job message).")
        Choice.Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            GetJobRequest request = GetJobRequest.newBuilder().setJobId(jobId).build();
            Job job = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).getJob(request));
            out().print(output == Choice.Output.JSON ? JobView.json(job) + System.lineSeparator() : JobView.text(job));
            out().flush();
            return 0;
        }
    }

    @Command(name = "watch", description = "Follow a job's lifecycle until it ends; a broken stream is"
            + " re-opened at another scheduler instance (standbys serve it too).")
    static class Watch extends Base {
        @Parameters(index = "0", description = "Job id.")
        String jobId;

        @Override
        Integer run(LeaderFailover scheduler) {
            WatchJobRequest request = WatchJobRequest.newBuilder().setJobId(jobId).build();
            LeaderFailover.Attempts attempts = scheduler.attempts();
            // a re-opened stream starts again from the job's current state: print each event once
            Set<JobEvent> printed = new HashSet<>();
            JobState last = JobState.JOB_STATE_UNSPECIFIED;
            while (true) {
                try {
                    Iterator<JobEvent> events = JobServiceGrpc.newBlockingStub(attempts.channel()).watchJob(request);
                    while (events.hasNext()) {
                        JobEvent e = events.next();
                        attempts.progressed();
                        last = e.getState();
                        if (printed.add(e)) {
                            out().printf("%s  %-10s %s %s%n", Instant.ofEpochSecond(e.getAt().getSeconds(),
                                    e.getAt().getNanos()), e.getState(), e.getReason(), placement(e.getPlacementList()));
                            out().flush();
                        }
                    }
                    return last == JobState.SUCCEEDED ? 0 : 1;
                } catch (StatusRuntimeException e) {
                    attempts.failed(e);
                }
            }
        }
    }

    @Command(name = "cancel", description = "Cancel a job.")
    static class Cancel extends Base {
        @Parameters(index = "0", description = "Job id.")
        String jobId;
        @Option(names = "--reason", defaultValue = "")
        String reason;

        @Override
        Integer run(LeaderFailover scheduler) {
            CancelJobRequest request = CancelJobRequest.newBuilder().setJobId(jobId).setReason(reason).build();
            Job job = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).cancelJob(request));
            out().println(job.getJobId() + "  " + job.getState() + "  " + job.getReason());
            return 0;
        }
    }

    @Command(name = "nodes", description = "List the hosts the scheduler knows.")
    static class Nodes extends Base {
        @Override
        Integer run(LeaderFailover scheduler) {
            List<Node> nodes = NodePages.all(ListNodesRequest.getDefaultInstance(),
                    page -> scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).listNodes(page)));
            out().printf("%-18s %-14s %-10s %-6s %-5s %-9s %s%n", "NODE", "INSTANCE", "CAPACITY", "FABRIC", "FREE",
                    "STATE", "GPUS");
            for (Node node : nodes) {
                long free = node.getGpusList().stream().filter(g -> !g.getAllocated()).count();
                out().printf("%-18s %-14s %-10s %-6s %-5s %-9s %d x %s%s%n", node.getNodeId(), node.getInstanceType(),
                        node.getCapacityType(), node.getRdmaFabric().isEmpty() ? "-" : node.getRdmaFabric(),
                        free + "/" + node.getGpusCount(), state(node), node.getGpusCount(),
                        node.getGpusCount() == 0 ? "-" : node.getGpus(0).getModel(),
                        node.getCordonReason().isEmpty() ? "" : "  (" + clip(node.getCordonReason(), 60) + ")");
            }
            return 0;
        }

        /** cordoned (by an operator), draining (by its agent), unhealthy (silent, or a notice or fault), or ready. */
        static String state(Node node) {
            if (!node.getCordonReason().isEmpty()) {
                return "cordoned";
            }
            if (node.getDraining()) {
                return "draining";
            }
            return node.getHealthy() ? "ready" : "unhealthy";
        }
    }

    @Command(name = "cordon", description = {"Keep new work off a host; what runs there keeps running.",
            "Operators only. Lasts until `undrain`, across scheduler restarts."})
    static class Cordon extends Base {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host's node id (see `nodes`).")
        String nodeId;
        @Option(names = "--reason", required = true, description = "Why, for the audit trail and the next operator.")
        String reason;

        @Override
        Integer run(LeaderFailover scheduler) {
            CordonNodeRequest request = CordonNodeRequest.newBuilder().setNodeId(nodeId).setReason(reason).build();
            return said(out(), scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).cordonNode(request)), "cordoned");
        }
    }

    @Command(name = "drain", description = {"Cordon a host and move its jobs off: each is asked to checkpoint",
            "within the grace, then stops and resumes elsewhere. Operators only."})
    static class Drain extends Base {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host's node id (see `nodes`).")
        String nodeId;
        @Option(names = "--reason", required = true, description = "Why, for the audit trail and the next operator.")
        String reason;
        @Option(names = "--grace", defaultValue = "0s", paramLabel = "DURATION",
                description = "How long jobs have to checkpoint (e.g. 90s, 5m, 1h; at most 24h); default: the"
                        + " scheduler's preemption grace.")
        String grace;

        @Override
        Integer run(LeaderFailover scheduler) {
            int seconds;
            try {
                seconds = graceSeconds(grace);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            DrainNodeRequest request = DrainNodeRequest.newBuilder().setNodeId(nodeId).setReason(reason)
                    .setGraceSeconds(seconds).build();
            NodeDrainResponse drained = scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).drainNode(request));
            said(out(), drained, "drained");
            drained.getJobsMovingList().forEach(job -> out().println("  moving " + job));
            return 0;
        }

        /** 90, 90s, 5m, 1h as seconds; anything else is a usage error that names the option. */
        static int graceSeconds(String text) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,6})([smh]?)").matcher(text.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException("--grace must be a number of seconds, minutes or hours (90s, 5m,"
                        + " 1h), was '" + clip(text, 40) + "'");
            }
            long n = Long.parseLong(m.group(1));
            long seconds = switch (m.group(2)) {
                case "m" -> n * 60;
                case "h" -> n * 3600;
                default -> n;
            };
            if (seconds > 86_400) {
                throw new IllegalArgumentException("--grace must be at most 24h, was '" + text.trim() + "'");
            }
            return (int) seconds;
        }
    }

    @Command(name = "undrain", description = {"Lift a host's cordon or drain: it takes work again.",
            "Operators only."})
    static class Undrain extends Base {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host's node id.")
        String nodeId;

        @Override
        Integer run(LeaderFailover scheduler) {
            UndrainNodeRequest request = UndrainNodeRequest.newBuilder().setNodeId(nodeId).build();
            return said(out(), scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).undrainNode(request)),
                    "takes work again");
        }
    }

    /** One line on what a cordon, drain or undrain did. */
    static int said(PrintWriter out, NodeDrainResponse r, String done) {
        out.println(r.getNode().getNodeId() + "  " + (r.getChanged() ? done : "already " + done)
                + (r.getNode().getCordonReason().isEmpty() ? "" : "  (" + clip(r.getNode().getCordonReason(), 60) + ")"));
        return 0;
    }

    @Command(name = "capacity", description = "Total and free GPUs by model and capacity type.")
    static class CapacityCommand extends Base {
        @Override
        Integer run(LeaderFailover scheduler) {
            Capacity capacity = scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch)
                    .getCapacity(GetCapacityRequest.getDefaultInstance()));
            capacity.getModelsList().forEach(m -> out().printf("%-18s %-10s %-12s %d/%d free (%.2f GPUs incl. shares)%n",
                    m.getModel(), m.getCapacityType(), m.getRdmaFabric().isEmpty() ? "no-rdma" : m.getRdmaFabric(),
                    m.getFreeGpus(), m.getTotalGpus(), m.getFreeMilli() / 1000.0));
            out().printf("%-29s %d/%d free%n", "all", capacity.getFreeGpus(), capacity.getTotalGpus());
            return 0;
        }
    }

    @Command(name = "usage", description = {"A tenant's GPU quota and what its jobs hold and wait for.",
            "For its tenant-admins, finance and operators."})
    static class Usage extends Base {
        @Option(names = "--tenant", defaultValue = "", description = "The tenant (default: the token's only one).")
        String tenant;

        @Override
        Integer run(LeaderFailover scheduler) {
            GetTenantUsageRequest request = GetTenantUsageRequest.newBuilder().setTenant(tenant).build();
            TenantUsage u = scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).getTenantUsage(request));
            out().printf("tenant %s: %s GPUs held by %d running job(s), %s GPUs asked for by %d waiting%n",
                    u.getTenant(), gpus(u.getRunningMilli()), u.getRunningJobs(), gpus(u.getPendingMilli()),
                    u.getPendingJobs());
            out().printf("quota: soft %s, hard %s GPUs; fair-share weight %d, dominant share %.1f%%%n",
                    u.getSoftQuotaMilli() == 0 ? "none" : gpus(u.getSoftQuotaMilli()),
                    u.getHardQuotaMilli() == 0 ? "none" : gpus(u.getHardQuotaMilli()), u.getWeight(),
                    100 * u.getDominantShare());
            return 0;
        }

        private static String gpus(long milli) {
            return milli % 1000 == 0 ? Long.toString(milli / 1000) : String.format(java.util.Locale.ROOT, "%.3f",
                    milli / 1000.0);
        }
    }

    static String placement(List<WorkerPlacement> placement) {
        return placement.stream().map(p -> p.getNodeId() + p.getGpuIndicesList())
                .collect(Collectors.joining(" "));
    }

    static String clip(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "~";
    }
}
