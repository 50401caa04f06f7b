package dev.gpucloud.cli;

import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.contracts.grpc.v1.Capacity;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.CordonNodeRequest;
import dev.gpucloud.contracts.grpc.v1.DrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.NodeDrainResponse;
import dev.gpucloud.contracts.grpc.v1.TenantUsage;
import dev.gpucloud.contracts.grpc.v1.UndrainNodeRequest;
import dev.gpucloud.contracts.paging.NodePages;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The commands about the fleet and a tenant's share of it (ClusterService): what the hosts are and hold, the free
 * capacity, a tenant's quota, and the operators' cordon, drain and undrain.
 */
final class ClusterCommands {

    private ClusterCommands() {
    }

    @Command(name = "nodes", description = "List the hosts the scheduler knows.")
    static class Nodes extends GpucloudCli.Base {
        @Option(names = "--model", paramLabel = "GPU_MODEL", defaultValue = "", description = "Only hosts with this"
                + " GPU model, e.g. A100-SXM4-40GB.")
        String model;
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            Output.Format format = output.format(Output.Format.values());
            List<Node> nodes = NodePages.all(ListNodesRequest.newBuilder().setGpuModel(model).build(),
                    page -> scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).listNodes(page)));
            if (output.structured()) {
                com.fasterxml.jackson.databind.node.ObjectNode tree = com.fasterxml.jackson.databind.node.JsonNodeFactory
                        .instance.objectNode();
                tree.withArray("nodes");
                nodes.forEach(n -> tree.withArray("nodes").add(Output.protoTree(n)));
                out().print(output.document(tree));
                out().flush();
                return 0;
            }
            boolean wide = format == Output.Format.WIDE;
            Output.Table table = wide
                    ? new Output.Table("NODE", "INSTANCE", "CAPACITY", "FABRIC", "FREE", "STATE", "GPUS", "ZONE",
                            "HOSTNAME", "GPU-MEMORY", "USD/HOUR", "LAST-SEEN", "CORDON-REASON")
                    : new Output.Table("NODE", "INSTANCE", "CAPACITY", "FABRIC", "FREE", "STATE", "GPUS");
            for (Node node : nodes) {
                long free = node.getGpusList().stream().filter(g -> !g.getAllocated()).count();
                String gpus = node.getGpusCount() + " x " + (node.getGpusCount() == 0 ? "-" : node.getGpus(0).getModel());
                if (wide) {
                    table.row(node.getNodeId(), node.getInstanceType(), node.getCapacityType(), node.getRdmaFabric(),
                            free + "/" + node.getGpusCount(), state(node), gpus, node.getZone(), node.getHostname(),
                            node.getGpusCount() == 0 ? "" : node.getGpus(0).getMemoryMib() + "Mi",
                            String.format(Locale.ROOT, "%.4f", node.getPriceMicrosPerHour() / 1e6),
                            JobView.time(node.getLastSeen()), node.getCordonReason());
                } else {
                    table.row(node.getNodeId(), node.getInstanceType(), node.getCapacityType(), node.getRdmaFabric(),
                            free + "/" + node.getGpusCount(), state(node), gpus
                                    + (node.getCordonReason().isEmpty() ? "" : "  (" + GpucloudCli.clip(node.getCordonReason(), 60) + ")"));
                }
            }
            output.print(out(), table);
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
    static class Cordon extends GpucloudCli.Base {
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
    static class Drain extends GpucloudCli.Base {
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
                        + " 1h), was '" + GpucloudCli.clip(text, 40) + "'");
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
    static class Undrain extends GpucloudCli.Base {
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
                + (r.getNode().getCordonReason().isEmpty() ? "" : "  (" + GpucloudCli.clip(r.getNode().getCordonReason(), 60) + ")"));
        return 0;
    }

    @Command(name = "capacity", description = "Total and free GPUs by model, capacity type and RDMA fabric.")
    static class CapacityCommand extends GpucloudCli.Base {
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            Output.Format format = output.format(Output.Format.values());
            Capacity capacity = scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch)
                    .getCapacity(GetCapacityRequest.getDefaultInstance()));
            if (output.structured()) {
                out().print(output.document(capacity));
                out().flush();
                return 0;
            }
            boolean wide = format == Output.Format.WIDE;
            Output.Table table = wide
                    ? new Output.Table("MODEL", "CAPACITY", "FABRIC", "FREE", "TOTAL", "FREE-SHARE", "USED-SHARE")
                    : new Output.Table("MODEL", "CAPACITY", "FABRIC", "FREE", "TOTAL");
            for (dev.gpucloud.contracts.grpc.v1.ModelCapacity m : capacity.getModelsList()) {
                String fabric = m.getRdmaFabric().isEmpty() ? "no-rdma" : m.getRdmaFabric();
                if (wide) {
                    table.row(m.getModel(), m.getCapacityType(), fabric, m.getFreeGpus(), m.getTotalGpus(),
                            Usage.gpus(m.getFreeMilli()), Usage.gpus(Math.max(0, m.getTotalGpus() * 1000L - m.getFreeMilli())));
                } else {
                    table.row(m.getModel(), m.getCapacityType(), fabric, m.getFreeGpus(), m.getTotalGpus());
                }
            }
            if (wide) {
                table.row("all", "", "", capacity.getFreeGpus(), capacity.getTotalGpus(), "", "");
            } else {
                table.row("all", "", "", capacity.getFreeGpus(), capacity.getTotalGpus());
            }
            output.print(out(), table);
            return 0;
        }
    }

    @Command(name = "usage", aliases = "quota", description = {"A tenant's GPU quota and what its jobs hold and wait for.",
            "For its tenant-admins, finance and operators; `gpucloud quota` is the same command."})
    static class Usage extends GpucloudCli.Base {
        @Option(names = "--tenant", defaultValue = "", description = "The tenant (default: the token's only one).")
        String tenant;
        @CommandLine.Mixin
        Output output;

        @Override
        Integer run(LeaderFailover scheduler) {
            Output.Format format = output.format(Output.Format.values());
            GetTenantUsageRequest request = GetTenantUsageRequest.newBuilder().setTenant(tenant).build();
            TenantUsage u = scheduler.call(ch -> ClusterServiceGrpc.newBlockingStub(ch).getTenantUsage(request));
            if (output.structured()) {
                out().print(output.document(u));
                out().flush();
                return 0;
            }
            if (format == Output.Format.TEXT) {
                out().printf("tenant %s: %s GPUs held by %d running job(s), %s GPUs asked for by %d waiting%n",
                        u.getTenant(), gpus(u.getRunningMilli()), u.getRunningJobs(), gpus(u.getPendingMilli()),
                        u.getPendingJobs());
                out().printf("quota: soft %s, hard %s GPUs; fair-share weight %d, dominant share %.1f%%%n",
                        quota(u.getSoftQuotaMilli()), quota(u.getHardQuotaMilli()), u.getWeight(),
                        100 * u.getDominantShare());
                String headroom = u.getHardQuotaMilli() == 0 ? "no hard quota: a submission is never refused for it"
                        : u.getRunningMilli() + u.getPendingMilli() >= u.getHardQuotaMilli()
                        ? "at its hard quota: a new submission is refused (RESOURCE_EXHAUSTED) until jobs end"
                        : gpus(u.getHardQuotaMilli() - u.getRunningMilli() - u.getPendingMilli())
                                + " GPUs more may be asked for before the hard quota refuses a submission";
                out().println(headroom);
                out().flush();
                return 0;
            }
            Output.Table table = new Output.Table("TENANT", "RUNNING-JOBS", "HELD-GPUS", "WAITING-JOBS", "ASKED-GPUS",
                    "SOFT-QUOTA", "HARD-QUOTA", "WEIGHT", "DOMINANT-SHARE");
            table.row(u.getTenant(), u.getRunningJobs(), gpus(u.getRunningMilli()), u.getPendingJobs(),
                    gpus(u.getPendingMilli()), quota(u.getSoftQuotaMilli()), quota(u.getHardQuotaMilli()), u.getWeight(),
                    String.format(Locale.ROOT, "%.1f%%", 100 * u.getDominantShare()));
            output.print(out(), table);
            return 0;
        }

        private static String quota(long milli) {
            return milli == 0 ? "none" : gpus(milli);
        }

        /** Milli-GPU as GPUs: "8", "0.125". */
        static String gpus(long milli) {
            return milli % 1000 == 0 ? Long.toString(milli / 1000) : String.format(java.util.Locale.ROOT, "%.3f",
                    milli / 1000.0);
        }
    }
}
