package dev.gpucloud.agent.rest;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.agent.inventory.RdmaNics;
import dev.gpucloud.agent.inventory.RdmaPort;
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
            List<String> cachedDatasets,
            List<RdmaPort> rdmaPorts,
            List<RunningAllocation> allocations) {
    }

    private final GpuBackend backend;
    private final AllocationRunner runner;
    private final AgentConfig config;

    public HostsResource(GpuBackend backend, AllocationRunner runner, AgentConfig config) {
        this.backend = backend;
        this.runner = runner;
        this.config = config;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public List<HostView> hosts() {
        Map<String, List<RunningAllocation>> running = runner.running().stream()
                .collect(Collectors.groupingBy(RunningAllocation::nodeId));
        // A real host's RDMA ports come from its sysfs; simulated hosts have none there.
        List<RdmaPort> rdma = "simulated".equals(backend.name()) ? List.of()
                : RdmaNics.read(java.nio.file.Path.of(config.host().sysfsRoot()));
        return backend.inventory().stream()
                .map(h -> view(h, rdma, running.getOrDefault(h.nodeId(), List.of()))).toList();
    }

    private static HostView view(HostInventory host, List<RdmaPort> rdma, List<RunningAllocation> allocations) {
        String model = host.gpus().stream().map(GpuDevice::model).distinct().collect(Collectors.joining(","));
        return new HostView(host.nodeId(), host.instanceType(), host.zone(), host.capacityType().name(),
                host.priceMicrosPerHour(), host.rdmaFabric(), host.switchPath(), model, host.gpus().size(),
                host.gpus().stream().map(GpuDevice::uuid).toList(), host.backend(), host.cachedDatasets(), rdma,
                allocations);
    }
}
