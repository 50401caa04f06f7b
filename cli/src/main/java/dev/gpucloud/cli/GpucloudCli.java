package dev.gpucloud.cli;

import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.client.SchedulerUnavailableException;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
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
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
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
        subcommands = {SubmitCommand.class, GpucloudCli.Jobs.class, GpucloudCli.Get.class,
                GpucloudCli.Watch.class, GpucloudCli.Cancel.class, ClusterCommands.Nodes.class,
                ClusterCommands.CapacityCommand.class, ClusterCommands.Usage.class, ClusterCommands.Cordon.class,
                ClusterCommands.Drain.class, ClusterCommands.Undrain.class, Identity.Login.class, Identity.WhoAmI.class,
                Identity.Logout.class, Identity.Issuer.class, AuditTrailCommand.class, InvoiceCommands.class,
                TraceCommand.class, LogsCommand.class, ConsoleCommand.class, ConfigCommands.class,
                CompletionCommand.class})
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
            + " (env GPUCLOUD_CONTEXT; gpucloud config get-contexts lists them); none: no context at all.")
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

    @Command(name = "jobs", description = "List jobs, newest first.")
    static class Jobs extends Base {
        @Option(names = "--tenant", defaultValue = "", description = "Only this tenant's jobs.")
        String tenant;
        @Option(names = "--state", converter = Choice.OfJobState.class,
                description = "Only jobs in this state (repeatable; pending, scheduled, running, ..., any case).")
        List<JobState> states = new ArrayList<>();
        @Option(names = "--limit", defaultValue = "50", description = "At most this many (default ${DEFAULT-VALUE};"
                + " with --array, every element unless given).")
        int limit;
        @Option(names = "--array", paramLabel = "ARRAY_ID", description = "Only this array's elements, by index,"
                + " after a line that counts them by state.")
        String arrayId;
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            Output.Format format = output.format(Output.Format.values());
            if (limit < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be at least 1, was " + limit);
            }
            boolean array = arrayId != null;
            if (array && (arrayId.isBlank() || !arrayId.strip().startsWith("arr-"))) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--array takes an array's id (arr-...),"
                        + " was '" + clip(arrayId, 64) + "'");
            }
            if (array && spec.commandLine().getParseResult().matchedOption("--limit") == null) {
                limit = (int) dev.gpucloud.contracts.limits.Limits.ARRAY_COUNT.max();
            }
            List<Job> jobs = new ArrayList<>();
            String token = "";
            do {
                ListJobsRequest request = ListJobsRequest.newBuilder().setTenant(tenant)
                        .setArrayId(array ? arrayId.strip() : "")
                        .addAllStates(states).setPageSize(Math.min(limit - jobs.size(), 100)).setPageToken(token).build();
                ListJobsResponse page = scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch).listJobs(request));
                page.getJobsList().stream().limit(limit - jobs.size()).forEach(jobs::add);
                token = page.getNextPageToken();
            } while (!token.isEmpty() && jobs.size() < limit);
            if (output.structured()) {
                com.fasterxml.jackson.databind.node.ObjectNode tree = com.fasterxml.jackson.databind.node.JsonNodeFactory
                        .instance.objectNode();
                if (array) {
                    com.fasterxml.jackson.databind.node.ObjectNode summary = tree.putObject("array");
                    summary.put("arrayId", arrayId.strip());
                    summary.put("elements", jobs.size());
                    ArraySummary.count(jobs).forEach((state, n) -> summary.with("states").put(state.name(), n));
                    summary.with("states");
                }
                jobs.forEach(j -> tree.withArray("jobs").add(Output.protoTree(j)));
                tree.withArray("jobs");
                out().print(output.document(tree));
                out().flush();
                return 0;
            }
            boolean wide = format == Output.Format.WIDE;
            List<String> header = new ArrayList<>(wide
                    ? List.of("JOB", "TENANT", "NAME", "STATE", "ASKS", "CAPACITY", "PRIORITY", "SUBMITTED",
                            "PLACEMENT", "REASON")
                    : List.of("JOB", "TENANT", "NAME", "STATE", "PLACEMENT", "REASON"));
            if (array) {
                header.add(0, "INDEX");
            }
            Output.Table table = new Output.Table(header.toArray(String[]::new));
            for (Job job : jobs) {
                JobSpec s = job.getSpec();
                List<Object> row = new ArrayList<>(wide
                        ? List.of(job.getJobId(), job.getTenant(), s.getName(), job.getState(), JobView.each(s),
                            Choice.word(s.getCapacity().name().replace("CAPACITY_", "")),
                            Choice.word(s.getPriority().name().replace("PRIORITY_", "")),
                            JobView.time(job.getSubmittedAt()), placement(job.getPlacementList()), job.getReason())
                        : List.of(job.getJobId(), job.getTenant(), clip(s.getName(), 12), job.getState(),
                            placement(job.getPlacementList()), job.getReason()));
                if (array) {
                    row.add(0, job.getArrayIndex());
                }
                table.row(row.toArray());
            }
            if (array && !output.noHeaders) {
                // the header line's company: a table for scripts (--no-headers) has neither
                out().println(ArraySummary.line(arrayId.strip(), jobs));
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
