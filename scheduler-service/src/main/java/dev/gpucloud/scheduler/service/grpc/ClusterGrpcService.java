package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.grpc.v1.Capacity;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.Gpu;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.ModelCapacity;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot.GpuView;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot.NodeView;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.TreeMap;

/** The ClusterService gRPC API: hosts and free capacity as the scheduler sees them. */
public class ClusterGrpcService extends ClusterServiceGrpc.ClusterServiceImplBase {

    private final SchedulerEngine engine;

    public ClusterGrpcService(SchedulerEngine engine) {
        this.engine = engine;
    }

    @Override
    public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> response) {
        try {
            dev.gpucloud.contracts.limits.Check.optionalText(request.getGpuModel(),
                    dev.gpucloud.contracts.limits.Limits.GPU_MODEL, "gpu_model");
        } catch (IllegalArgumentException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        engine.cluster().subscribe().with(snapshot -> {
            ListNodesResponse.Builder b = ListNodesResponse.newBuilder();
            for (NodeView node : snapshot.nodes()) {
                boolean wanted = request.getGpuModel().isEmpty()
                        || node.gpus().stream().anyMatch(g -> g.model().equals(request.getGpuModel()));
                if (wanted) {
                    b.addNodes(node(node));
                }
            }
            response.onNext(b.build());
            response.onCompleted();
        }, f -> response.onError(GrpcErrors.toStatus(f)));
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
                .setLastSeen(ProtoMapper.timestamp(node.lastSeen()));
        for (GpuView gpu : node.gpus()) {
            b.addGpus(Gpu.newBuilder().setIndex(gpu.index()).setUuid(gpu.uuid()).setModel(gpu.model())
                    .setMemoryMib(gpu.memoryMib()).setNvlinkIsland(gpu.nvlinkIsland())
                    .setAllocated(!gpu.holders().isEmpty()).setAllocationId(String.join(",", gpu.holders())));
        }
        return b.build();
    }
}
