package dev.gpucloud.agent.inventory;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.cloud.InstanceFacts;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.nio.file.Path;
import java.util.List;

/**
 * A GPU backend whose host descriptions also carry the datasets cached locally, the RDMA NIC ports
 * read from sysfs and, where the configuration left them unknown, the instance type, zone and
 * capacity type that the cloud's metadata service gave.
 */
public final class EnrichedBackend implements GpuBackend {

    private final GpuBackend delegate;
    private final Path datasetDir;
    private final InstanceFacts facts;
    private final Path sysfsRoot;

    /** {@code datasetDir} and {@code facts} may be null (nothing to add). */
    public EnrichedBackend(GpuBackend delegate, Path datasetDir, InstanceFacts facts) {
        this(delegate, datasetDir, facts, null);
    }

    /**
     * {@code datasetDir}, {@code facts} and {@code sysfsRoot} may be null (nothing to add); with a sysfs
     * root, every description carries the RDMA ports found under its class/infiniband, read afresh each time
     * (a port that went DOWN shows at the next inventory).
     */
    public EnrichedBackend(GpuBackend delegate, Path datasetDir, InstanceFacts facts, Path sysfsRoot) {
        this.delegate = delegate;
        this.datasetDir = datasetDir;
        this.facts = facts;
        this.sysfsRoot = sysfsRoot;
    }

    public GpuBackend delegate() {
        return delegate;
    }

    /** The backend underneath any enrichment. */
    public static GpuBackend unwrap(GpuBackend backend) {
        return backend instanceof EnrichedBackend e ? e.delegate : backend;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public List<HostInventory> inventory() {
        List<String> datasets = datasetDir == null ? null : DatasetCache.list(datasetDir);
        List<RdmaNic> nics = sysfsRoot == null ? null : RdmaNics.read(sysfsRoot).stream().map(RdmaPort::toNic).toList();
        return delegate.inventory().stream().map(h -> enrich(h, datasets, nics)).toList();
    }

    @Override
    public List<TelemetrySample> sample() {
        return delegate.sample();
    }

    private HostInventory enrich(HostInventory h, List<String> datasets, List<RdmaNic> nics) {
        String type = h.instanceType();
        String zone = h.zone();
        CapacityType capacity = h.capacityType();
        if (facts != null) {
            if ("unknown".equals(type) && facts.instanceType() != null) {
                type = facts.instanceType();
            }
            if ("unknown".equals(zone) && facts.zone() != null) {
                zone = facts.zone();
            }
            if ("spot".equals(facts.capacityType())) {
                capacity = CapacityType.SPOT;
            }
        }
        return new HostInventory(h.nodeId(), h.hostname(), type, zone, capacity, h.priceMicrosPerHour(), h.cpuMillis(),
                h.memoryMib(), h.rdmaFabric(), h.switchPath(), h.gpus(), datasets == null ? h.cachedDatasets() : datasets,
                h.backend(), h.observedAt(), nics == null ? h.rdmaNics() : nics);
    }
}
