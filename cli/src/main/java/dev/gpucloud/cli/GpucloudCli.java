package dev.gpucloud.cli;

import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.client.SchedulerUnavailableException;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
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
                GpucloudCli.Watch.class, GpucloudCli.Cancel.class, ClusterCommands.Nodes.class,
                ClusterCommands.CapacityCommand.class, ClusterCommands.Usage.class, ClusterCommands.Cordon.class,
                ClusterCommands.Drain.class, ClusterCommands.Undrain.class, Identity.Login.class, Identity.WhoAmI.class,
                Identity.Logout.class, Identity.Issuer.class, AuditTrailCommand.class, InvoiceCommands.class,
                TraceCommand.class, LogsCommand.class, ConfigCommands.class, CompletionCommand.class})
public class GpucloudCli {

    @Option(names = {"--server", "--scheduler"}, paramLabel = "HOST:PORT[,...]",
            description = "The scheduler's gRPC address, or several comma-separated (one leader, the rest standbys)."
                    + " Default: env GPUCLOUD_SERVER (or GPUCLOUD_SCHEDULER), else the context's, else the local"
                    + " stack's that ./gpucloud passes, else localhost:8081.")
    String scheduler;
    @Option(names = "--ca-file", paramLabel = "PEM",
            description = "Speak TLS to the scheduler, trusting the certificate authority in this PEM file (the stack"
                    + " ./gpucloud up starts: .run/tls/ca.pem, which ./gpucloud passes); without it, plaintext."
                    + " Default: env GPUCLOUD_CA_FILE, else the context's.")
    java.nio.file.Path caFile;

    @Option(names = "--profile", paramLabel = "NAME",
            description = "Whose token to send: the one ./gpucloud login stored for this profile (default: env"
                    + " GPUCLOUD_PROFILE, else the context's, else 'default'; GPUCLOUD_TOKEN overrides the token).")
    String profile;

    @Option(names = "--context", paramLabel = "NAME", description = "Use this context rather than the current one"
            + " (env GPUCLOUD_CONTEXT; gpucloud config get-contexts lists them).")
    String context;

    @Option(names = "--failover-timeout", defaultValue = "30", paramLabel = "SECONDS",
            description = "How long a call may keep moving between scheduler instances (a standby, one that is"
                    + " down) before it gives up (default: ${DEFAULT-VALUE} s).")
    double failoverTimeout;

    @Option(names = "--request-timeout", paramLabel = "DURATION", defaultValue = "${env:GPUCLOUD_REQUEST_TIMEOUT:-"
            + RpcDeadline.DEFAULT + "}", description = "How long one call may wait for the scheduler's answer: 500ms,"
            + " 15s, 2m (default: ${DEFAULT-VALUE}; env GPUCLOUD_REQUEST_TIMEOUT). Streams (watch, logs -f) have none.")
    String requestTimeout;

    /** Where --server came from, for errors: "--server", "context prod", "the default", ... */
    String serverFrom = "--server";

    /** gRPC's own logger: it writes a name it cannot resolve as a stack trace; the CLI says it in one line instead. */
    private static final java.util.logging.Logger GRPC_LOG = java.util.logging.Logger.getLogger("io.grpc");

    public static void main(String[] args) {
        GRPC_LOG.setLevel(java.util.logging.Level.OFF);
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true), System::getenv));
    }

    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return run(args, out, err, System::getenv);
    }

    /** The commands that must work whatever the contexts' file says: they read or mend it, or call nothing. */
    private static final Set<String> NO_TARGET = Set.of("gpucloud config", "gpucloud completion", "gpucloud issuer");

    /**
     * Runs the CLI. A mistyped option is one line on stderr and exit 2; a gRPC error prints its
     * status and message, an unreachable scheduler says which address was tried, and either exits 1.
     * Nothing prints a stack trace. {@code env} is the environment (a test's own map).
     */
    static int run(String[] args, PrintWriter out, PrintWriter err, java.util.function.Function<String, String> env) {
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
            err.println("error: " + root.describe(e));
            err.flush();
            return 1;
        });
        cli.setExecutionStrategy(parsed -> {
            List<CommandLine> chain = parsed.asCommandLineList();
            String leaf = chain.get(chain.size() - 1).getCommandSpec().qualifiedName();
            boolean help = parsed.isUsageHelpRequested() || parsed.isVersionHelpRequested() || chain.stream()
                    .anyMatch(c -> c.isUsageHelpRequested() || c.isVersionHelpRequested());
            if (!help && NO_TARGET.stream().noneMatch(leaf::startsWith)) {
                try {
                    root.target(env);
                } catch (Contexts.Problem problem) {
                    err.println("error: " + problem.getMessage());
                    err.flush();
                    return 1;
                }
            }
            return new CommandLine.RunLast().execute(parsed);
        });
        int code = cli.execute(args);
        out.flush();
        return code;
    }

    /** Puts the settings each command reads in place: flag, else environment, else context, else default. */
    void target(java.util.function.Function<String, String> env) {
        Contexts.Target t = Contexts.resolve(scheduler, caFile, profile, context, env);
        scheduler = t.server();
        caFile = t.caFile();
        profile = t.profile();
        context = t.context();
        serverFrom = t.serverFrom();
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

    /** One line that says what went wrong and what to do about it. */
    String describe(Exception e) {
        String where = scheduler + (serverFrom.equals("--server") ? "" : " (from " + serverFrom + ")");
        String point = "; start the stack with ./gpucloud up, or point --server (env GPUCLOUD_SERVER, or a context:"
                + " gpucloud config use-context) at a running one";
        if (e instanceof SchedulerUnavailableException gaveUp) {
            Status last = gaveUp.lastStatus();
            if (gaveUp.noneReachable()) {
                return "cannot reach the scheduler at " + where + ": " + unreachable(last) + point;
            }
            return String.format(Locale.ROOT, "no scheduler at %s took the call within %.1f s (last, from %s: %s);"
                    + " ./gpucloud status shows each instance's role, --failover-timeout waits longer", where,
                    gaveUp.spent().toMillis() / 1000.0, gaveUp.lastAddress(), unreachable(last));
        }
        if (e instanceof Oidc.Failure || e instanceof AuditTrailCommand.BrokerProblem || e instanceof TraceCommand.Problem
                || e instanceof BillingApi.Failure || e instanceof Contexts.Problem || e instanceof LogsCommand.Problem) {
            return e.getMessage();
        }
        if (e instanceof StatusRuntimeException sre) {
            Status status = sre.getStatus();
            String said = firstLine(String.valueOf(status.getDescription()));
            return switch (status.getCode()) {
                case UNAVAILABLE -> "cannot reach the scheduler at " + where + ": " + unreachable(status) + point;
                case DEADLINE_EXCEEDED -> "the scheduler at " + where + " did not answer in time: " + said
                        + "; try again, or allow longer with --request-timeout (env GPUCLOUD_REQUEST_TIMEOUT)";
                case UNAUTHENTICATED -> "UNAUTHENTICATED: " + said + (said.contains("gpucloud login") ? ""
                        : "; log in with gpucloud login (profile " + profile + "), or --profile NAME for another");
                case PERMISSION_DENIED -> "PERMISSION_DENIED: " + said + " (as profile " + profile
                        + "; gpucloud whoami shows whose token that is)";
                default -> status.getCode() + ": " + said;
            };
        }
        if (e instanceof java.io.UncheckedIOException io) {
            return firstLine(String.valueOf(io.getMessage())) + (io.getCause() == null ? ""
                    : " (" + firstLine(String.valueOf(io.getCause().getMessage())) + ")");
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

    /** The scheduler instances of --server; each move is one line on stderr; every unary call has a deadline. */
    LeaderFailover failover(PrintWriter err) {
        Duration deadline;
        try {
            deadline = RpcDeadline.parse(requestTimeout);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--request-timeout: " + e.getMessage());
        }
        if (!(failoverTimeout >= 0)) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--failover-timeout must be a number of seconds >= 0, was " + failoverTimeout);
        }
        List<String> addresses;
        try {
            addresses = LeaderFailover.parseAddresses(scheduler);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--server: " + e.getMessage());
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
            channel.intercept(new RpcDeadline(deadline));
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
            SubmitJobResponse response;
            try {
                response = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).submitJob(request));
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.DEADLINE_EXCEEDED) {
                    throw e;
                }
                // the job may have been accepted: say which request id finds it again without a second job
                throw Status.DEADLINE_EXCEEDED.withDescription(e.getStatus().getDescription() + "; --request-id "
                        + id).asRuntimeException();
            }
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
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            Output.Format format = output.format(Output.Format.values());
            if (limit < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be at least 1, was " + limit);
            }
            List<Job> jobs = new ArrayList<>();
            String token = "";
            do {
                ListJobsRequest request = ListJobsRequest.newBuilder().setTenant(tenant)
                        .addAllStates(states).setPageSize(Math.min(limit - jobs.size(), 100)).setPageToken(token).build();
                ListJobsResponse page = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).listJobs(request));
                page.getJobsList().stream().limit(limit - jobs.size()).forEach(jobs::add);
                token = page.getNextPageToken();
            } while (!token.isEmpty() && jobs.size() < limit);
            if (output.structured()) {
                com.fasterxml.jackson.databind.node.ObjectNode tree = com.fasterxml.jackson.databind.node.JsonNodeFactory
                        .instance.objectNode();
                jobs.forEach(j -> tree.withArray("jobs").add(Output.protoTree(j)));
                tree.withArray("jobs");
                out().print(output.document(tree));
                out().flush();
                return 0;
            }
            boolean wide = format == Output.Format.WIDE;
            Output.Table table = wide
                    ? new Output.Table("JOB", "TENANT", "NAME", "STATE", "ASKS", "CAPACITY", "PRIORITY", "SUBMITTED",
                            "PLACEMENT", "REASON")
                    : new Output.Table("JOB", "TENANT", "NAME", "STATE", "PLACEMENT", "REASON");
            for (Job job : jobs) {
                JobSpec s = job.getSpec();
                if (wide) {
                    table.row(job.getJobId(), job.getTenant(), s.getName(), job.getState(), JobView.each(s),
                            Choice.word(s.getCapacity().name().replace("CAPACITY_", "")),
                            Choice.word(s.getPriority().name().replace("PRIORITY_", "")),
                            JobView.time(job.getSubmittedAt()), placement(job.getPlacementList()), job.getReason());
                } else {
                    table.row(job.getJobId(), job.getTenant(), clip(s.getName(), 12), job.getState(),
                            placement(job.getPlacementList()), job.getReason());
                }
            }
            output.print(out(), table);
            return 0;
        }
    }

    @Command(name = "get", description = "Show one job: what it asks, its state and why, where it runs, when.")
    static class Get extends Base {
        @Parameters(index = "0", description = "Job id.")
        String jobId;
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            output.format(Output.Format.TEXT, Output.Format.JSON, Output.Format.YAML);
            GetJobRequest request = GetJobRequest.newBuilder().setJobId(jobId).build();
            Job job = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).getJob(request));
            out().print(output.structured() ? output.document(job) : JobView.text(job));
            out().flush();
            return 0;
        }
    }

    @Command(name = "watch", description = "Follow a job's lifecycle until it ends; a broken stream is"
            + " re-opened at another scheduler instance (standbys serve it too).")
    static class Watch extends Base {
        @Parameters(index = "0", description = "Job id.")
        String jobId;
        /** text (a line an event), or json: one JobEvent a line in protobuf's JSON mapping. */
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            Output.Format format = output.format(Output.Format.TEXT, Output.Format.JSON);
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
                        if (!printed.add(e)) {
                            continue;
                        }
                        if (format == Output.Format.JSON) {
                            out().println(Output.jsonLine(e));
                        } else {
                            out().printf("%s  %-10s %s %s%n", Instant.ofEpochSecond(e.getAt().getSeconds(),
                                    e.getAt().getNanos()), e.getState(), e.getReason(), placement(e.getPlacementList()));
                        }
                        out().flush();
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

    static String placement(List<WorkerPlacement> placement) {
        return placement.stream().map(p -> p.getNodeId() + p.getGpuIndicesList())
                .collect(Collectors.joining(" "));
    }

    static String clip(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "~";
    }
}
