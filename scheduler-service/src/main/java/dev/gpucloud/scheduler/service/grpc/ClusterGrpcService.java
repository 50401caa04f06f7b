package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.grpc.v1.Capacity;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.CordonNodeRequest;
import dev.gpucloud.contracts.grpc.v1.DrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest;
import dev.gpucloud.contracts.grpc.v1.Gpu;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.ModelCapacity;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.NodeDrainResponse;
import dev.gpucloud.contracts.grpc.v1.TenantUsage;
import dev.gpucloud.contracts.grpc.v1.UndrainNodeRequest;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot.GpuView;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot.NodeView;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The ClusterService gRPC API: hosts and free capacity as the scheduler sees them, and operators' cordons. */
public class ClusterGrpcService extends ClusterServiceGrpc.ClusterServiceImplBase {

    private final SchedulerEngine engine;

    public ClusterGrpcService(SchedulerEngine engine) {
        this.engine = engine;
    }

    /** The most hosts one ListNodes page holds, and what a request with no page size gets. */
    static final int NODE_PAGE_MAX = 500;
    private static final String NODE_TOKEN_PREFIX = "node:";

    @Override
    public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> response) {
        String after;
        int size;
        try {
            Access.operator(Authentication.caller(), "list hosts");
            dev.gpucloud.contracts.limits.Check.optionalText(request.getGpuModel(),
                    dev.gpucloud.contracts.limits.Limits.GPU_MODEL, "gpu_model");
            size = request.getPageSize() == 0 ? NODE_PAGE_MAX : request.getPageSize();
            if (size < 0 || size > NODE_PAGE_MAX) {
                throw GrpcErrors.invalid("field 'page_size' must be within 0.." + NODE_PAGE_MAX + ", was "
                        + Integer.toUnsignedString(request.getPageSize()));
            }
            after = afterNode(request.getPageToken());
        } catch (IllegalArgumentException | io.grpc.StatusRuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        engine.cluster(after, request.getGpuModel(), size + 1).subscribe().with(page -> {
            ListNodesResponse.Builder b = ListNodesResponse.newBuilder();
            List<NodeView> nodes = page.nodes();
            nodes.stream().limit(size).forEach(n -> b.addNodes(node(n)));
            if (nodes.size() > size) { // one more host: there is a next page
                b.setNextPageToken(nodeToken(nodes.get(size - 1).nodeId()));
            }
            response.onNext(b.build());
            response.onCompleted();
        }, f -> response.onError(GrpcErrors.toStatus(f)));
    }

    /** A page token: the last node id of the page (node ids are not secret, so it is encoded, not signed). */
    static String nodeToken(String lastNodeId) {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((NODE_TOKEN_PREFIX + lastNodeId).getBytes(StandardCharsets.UTF_8));
    }

    /** The node id a page token starts after; null for none; INVALID_ARGUMENT for a token this service did not issue. */
    static String afterNode(String token) {
        if (token.isEmpty()) {
            return null;
        }
        try {
            String s = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
            if (s.startsWith(NODE_TOKEN_PREFIX) && s.length() > NODE_TOKEN_PREFIX.length()) {
                return s.substring(NODE_TOKEN_PREFIX.length());
            }
        } catch (IllegalArgumentException e) {
            // not base64: refused below
        }
        throw GrpcErrors.invalid("field 'page_token' is not a ListNodes token this service issued");
    }

    /** Capacity by GPU model, capacity type and RDMA fabric; free counts only healthy hosts. */
    @Override
    public void getCapacity(GetCapacityRequest request, StreamObserver<Capacity> response) {
        engine.cluster().subscribe().with(snapshot -> {
            Map<String, long[]> groups = new TreeMap<>();
            int total = 0;
            int free = 0;
            for (NodeView node : snapshot.nodes()) {
                for (GpuView gpu : node.gpus()) {
                    String key = gpu.model() + "|" + node.capacityType() + "|"
                            + (node.rdmaFabric() == null ? "" : node.rdmaFabric());
                    long[] counts = groups.computeIfAbsent(key, k -> new long[3]);
                    counts[0]++;
                    total++;
                    if (node.healthy()) {
                        boolean wholeFree = !gpu.mig() && gpu.usedMilli() == 0;
                        if (wholeFree) {
                            counts[1]++;
                            free++;
                        }
                        counts[2] += gpu.mig() ? 1000L * (gpu.migSlices() - gpu.migSlicesUsed()) / Math.max(1, gpu.migSlices())
                                : 1000 - gpu.usedMilli();
                    }
                }
            }
            Capacity.Builder b = Capacity.newBuilder().setTotalGpus(total).setFreeGpus(free);
            groups.forEach((key, counts) -> {
                String[] parts = key.split("\\|", -1);
                b.addModels(ModelCapacity.newBuilder().setModel(parts[0]).setCapacityType(parts[1])
                        .setRdmaFabric(parts[2]).setTotalGpus((int) counts[0]).setFreeGpus((int) counts[1])
                        .setFreeMilli(counts[2]));
            });
            response.onNext(b.build());
            response.onCompleted();
        }, f -> response.onError(GrpcErrors.toStatus(f)));
    }

    /** A tenant's quota and what its jobs hold and wait for: its tenant-admins, finance and operators. */
    @Override
    public void getTenantUsage(GetTenantUsageRequest request, StreamObserver<TenantUsage> response) {
        String tenant;
        try {
            tenant = Access.usageTenant(Authentication.caller(), request.getTenant());
        } catch (IllegalArgumentException | io.grpc.StatusRuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        engine.tenantUsage(tenant).subscribe().with(u -> {
            response.onNext(TenantUsage.newBuilder().setTenant(u.tenant()).setSoftQuotaMilli(u.softQuotaMilli())
                    .setHardQuotaMilli(u.hardQuotaMilli()).setWeight(u.weight()).setRunningJobs(u.runningJobs())
                    .setRunningMilli(u.runningMilli()).setPendingJobs(u.pendingJobs()).setPendingMilli(u.pendingMilli())
                    .setDominantShare(u.dominantShare()).build());
            response.onCompleted();
        }, f -> response.onError(GrpcErrors.toStatus(f)));
    }

    /** The longest grace a drain may give its jobs to checkpoint: a day. */
    static final int MAX_GRACE_SECONDS = 86_400;

    /** Operators: no new work lands on the host; what runs there keeps running. */
    @Override
    public void cordonNode(CordonNodeRequest request, StreamObserver<NodeDrainResponse> response) {
        cordon(request.getNodeId(), request.getReason(), false, 0, response);
    }

    /** Operators: a cordon, and every job on the host is asked to checkpoint within the grace and move. */
    @Override
    public void drainNode(DrainNodeRequest request, StreamObserver<NodeDrainResponse> response) {
        cordon(request.getNodeId(), request.getReason(), true, request.getGraceSeconds(), response);
    }

    private void cordon(String nodeId, String reason, boolean drain, int graceSeconds,
            StreamObserver<NodeDrainResponse> response) {
        Caller caller;
        Duration grace;
        try {
            caller = Authentication.caller();
            Access.operator(caller, drain ? "drain hosts" : "cordon hosts");
            nodeId(nodeId);
            reason(reason);
            if (graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
                throw GrpcErrors.invalid("field 'grace_seconds' must be within 0.." + MAX_GRACE_SECONDS
                        + " (0: the scheduler's preemption grace), was " + Integer.toUnsignedString(graceSeconds));
            }
            grace = graceSeconds == 0 ? null : Duration.ofSeconds(graceSeconds);
        } catch (IllegalArgumentException | io.grpc.StatusRuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        engine.cordon(nodeId, drain, reason, caller.subject(), grace)
                .subscribe().with(c -> answer(c, response), f -> response.onError(GrpcErrors.toStatus(f)));
    }

    /** Operators: lifts a cordon or drain; the host takes work again. */
    @Override
    public void undrainNode(UndrainNodeRequest request, StreamObserver<NodeDrainResponse> response) {
        Caller caller;
        try {
            caller = Authentication.caller();
            Access.operator(caller, "undrain hosts");
            nodeId(request.getNodeId());
        } catch (IllegalArgumentException | io.grpc.StatusRuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        engine.undrain(request.getNodeId(), caller.subject())
                .subscribe().with(c -> answer(c, response), f -> response.onError(GrpcErrors.toStatus(f)));
    }

    private static void answer(SchedulerEngine.Cordoned c, StreamObserver<NodeDrainResponse> response) {
        response.onNext(NodeDrainResponse.newBuilder()
                .setNode(c.node() != null ? node(c.node()) : Node.newBuilder().setNodeId(c.nodeId()).build())
                .addAllJobsMoving(c.jobsMoving()).setChanged(c.changed()).build());
        response.onCompleted();
    }

    private static void nodeId(String nodeId) {
        Check.text(nodeId, Limits.ID, "node_id");
    }

    /** A reason is required, for the audit trail and the next operator: one line of text. */
    private static void reason(String reason) {
        Check.text(reason, Limits.DETAIL, "reason");
        if (reason.isBlank()) {
            throw GrpcErrors.invalid("field 'reason' must not be blank: say why, for the audit trail and the next"
                    + " operator");
        }
        for (int i = 0; i < reason.length(); i++) {
            if (Character.isISOControl(reason.charAt(i))) {
                throw GrpcErrors.invalid("field 'reason' must be one line of text: a control character at " + i);
            }
        }
    }

    private static Node node(NodeView node) {
        Node.Builder b = Node.newBuilder()
                .setNodeId(node.nodeId())
                .setHostname(node.hostname())
                .setInstanceType(node.instanceType())
                .setZone(node.zone())
                .setCapacityType(node.capacityType().name())
                .setRdmaFabric(node.rdmaFabric() == null ? "" : node.rdmaFabric())
                .setPriceMicrosPerHour(node.priceMicrosPerHour())
                .setHealthy(node.healthy())
                .setLastSeen(ProtoMapper.timestamp(node.lastSeen()))
                .setDraining(node.draining())
                .setCordonReason(node.cordonReason() == null ? "" : node.cordonReason());
        for (GpuView gpu : node.gpus()) {
            b.addGpus(Gpu.newBuilder().setIndex(gpu.index()).setUuid(gpu.uuid()).setModel(gpu.model())
                    .setMemoryMib(gpu.memoryMib()).setNvlinkIsland(gpu.nvlinkIsland())
                    .setAllocated(!gpu.holders().isEmpty()).setAllocationId(String.join(",", gpu.holders())));
        }
        return b.build();
    }
}
