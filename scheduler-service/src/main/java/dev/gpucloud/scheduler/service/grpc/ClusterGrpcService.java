package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.grpc.v1.Capacity;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.Gpu;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.ModelCapacity;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.scheduler.cluster.Host;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import io.grpc.stub.StreamObserver;
import io.quarkus.grpc.GrpcService;
import java.util.Map;
import java.util.TreeMap;

/** The ClusterService gRPC API: hosts and free capacity as the scheduler sees them. */
@GrpcService
public class ClusterGrpcService extends ClusterServiceGrpc.ClusterServiceImplBase {

    private final SchedulerEngine engine;

    public ClusterGrpcService(SchedulerEngine engine) {
        this.engine = engine;
    }

    @Override
    public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> response) {
        engine.cluster().subscribe().with(snapshot -> {
            ListNodesResponse.Builder b = ListNodesResponse.newBuilder();
            for (Host host : snapshot.hosts()) {
                boolean wanted = request.getGpuModel().isEmpty()
                        || host.gpus().stream().anyMatch(g -> g.model().equals(request.getGpuModel()));
                if (wanted) {
                    b.addNodes(node(host, snapshot));
                }
            }
            response.onNext(b.build());
            response.onCompleted();
        }, f -> response.onError(GrpcErrors.toStatus(f)));
    }

    @Override
    public void getCapacity(GetCapacityRequest request, StreamObserver<Capacity> response) {
        engine.cluster().subscribe().with(snapshot -> {
            Map<String, int[]> byModel = new TreeMap<>();
            int total = 0;
            int free = 0;
            for (Host host : snapshot.hosts()) {
                for (GpuDevice gpu : host.gpus()) {
                    int[] counts = byModel.computeIfAbsent(gpu.model() + "|" + host.inventory().capacityType(),
                            k -> new int[2]);
                    counts[0]++;
                    total++;
                    if (snapshot.holder(host.nodeId(), gpu.index()) == null && !host.draining()) {
                        counts[1]++;
                        free++;
                    }
                }
            }
            Capacity.Builder b = Capacity.newBuilder().setTotalGpus(total).setFreeGpus(free);
            byModel.forEach((key, counts) -> {
                String[] parts = key.split("\\|");
                b.addModels(ModelCapacity.newBuilder().setModel(parts[0]).setCapacityType(parts[1])
                        .setTotalGpus(counts[0]).setFreeGpus(counts[1]));
            });
            response.onNext(b.build());
            response.onCompleted();
        }, f -> response.onError(GrpcErrors.toStatus(f)));
    }

    private static Node node(Host host, ClusterSnapshot snapshot) {
        var inv = host.inventory();
        Node.Builder b = Node.newBuilder()
                .setNodeId(inv.nodeId())
                .setHostname(inv.hostname())
                .setInstanceType(inv.instanceType())
                .setZone(inv.zone())
                .setCapacityType(inv.capacityType().name())
                .setRdmaFabric(inv.rdmaFabric() == null ? "" : inv.rdmaFabric())
                .setPriceMicrosPerHour(inv.priceMicrosPerHour())
                .setHealthy(!host.draining())
                .setLastSeen(ProtoMapper.timestamp(host.lastSeen()));
        for (GpuDevice gpu : inv.gpus()) {
            String holder = snapshot.holder(inv.nodeId(), gpu.index());
            b.addGpus(Gpu.newBuilder().setIndex(gpu.index()).setUuid(gpu.uuid()).setModel(gpu.model())
                    .setMemoryMib(gpu.memoryMib()).setNvlinkIsland(gpu.nvlinkIsland())
                    .setAllocated(holder != null).setAllocationId(holder == null ? "" : holder));
        }
        return b.build();
    }
}
