package dev.gpucloud.agent.rest;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.RunningAllocation;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** What this agent's hosts are and what runs on them, for people and scripts. */
@Path("/agent/hosts")
public class HostsResource {

    /** One host and the allocations running on it. */
    public record HostView(
            String nodeId,
            String instanceType,
            String zone,
            String capacityType,
            long priceMicrosPerHour,
            String rdmaFabric,
            List<String> switchPath,
            String gpuModel,
            int gpuCount,
            List<String> gpuUuids,
            String backend,
            List<RunningAllocation> allocations) {
    }

    private final GpuBackend backend;
    private final AllocationRunner runner;

    public HostsResource(GpuBackend backend, AllocationRunner runner) {
        this.backend = backend;
        this.runner = runner;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public List<HostView> hosts() {
        Map<String, List<RunningAllocation>> running = runner.running().stream()
                .collect(Collectors.groupingBy(RunningAllocation::nodeId));
        return backend.inventory().stream().map(h -> view(h, running.getOrDefault(h.nodeId(), List.of()))).toList();
    }

    private static HostView view(HostInventory host, List<RunningAllocation> allocations) {
        String model = host.gpus().stream().map(GpuDevice::model).distinct().collect(Collectors.joining(","));
        return new HostView(host.nodeId(), host.instanceType(), host.zone(), host.capacityType().name(),
                host.priceMicrosPerHour(), host.rdmaFabric(), host.switchPath(), model, host.gpus().size(),
                host.gpus().stream().map(GpuDevice::uuid).toList(), host.backend(), allocations);
    }
}
