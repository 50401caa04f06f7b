package dev.gpucloud.agent.config;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.cloud.InstanceFacts;
import dev.gpucloud.agent.cloud.MetadataException;
import dev.gpucloud.agent.cloud.MetadataProvider;
import dev.gpucloud.agent.inventory.EnrichedBackend;
import dev.gpucloud.agent.runner.MigProvisioner;
import dev.gpucloud.agent.inventory.RdmaNics;
import dev.gpucloud.agent.inventory.RdmaPort;
import dev.gpucloud.agent.nvml.HostFacts;
import dev.gpucloud.agent.nvml.Nvml;
import dev.gpucloud.agent.nvml.NvidiaSmiBackend;
import dev.gpucloud.agent.nvml.NvmlBackend;
import dev.gpucloud.agent.nvml.NvmlUnavailableException;
import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.ProcessRunner;
import dev.gpucloud.agent.runner.RunnerSettings;
import dev.gpucloud.agent.sim.SimulatedFleet;
import dev.gpucloud.agent.sim.SimulationSettings;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EnrolmentSigner;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.Typed;
import jakarta.inject.Singleton;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Chooses the agent's GPU backend and runner from configuration. The simulated fleet is the GPU
 * backend when gpucloud.agent.backend is simulated, or auto on a host where neither NVML nor
 * nvidia-smi answers; allocations run as real processes with a real backend and are simulated
 * with the simulated one, unless gpucloud.agent.runner.kind says otherwise.
 */
public class BackendProducer {

    private static final Logger LOG = Logger.getLogger(BackendProducer.class);

    @Produces
    @Singleton
    Clock clock() {
        return Clock.systemUTC();
    }

    @Produces
    @Singleton
    @Typed(SimulatedFleet.class)
    SimulatedFleet simulatedFleet(AgentConfig config, Clock clock) {
        AgentConfig.Sim sim = config.sim();
        SimulationSettings settings = new SimulationSettings(sim.fleet(), sim.nodePrefix(), sim.zone(), sim.seed(),
                config.usageInterval(), sim.defaultRunDuration(), sim.checkpointSave());
        SimulatedFleet fleet = new SimulatedFleet(settings, clock);
        LOG.infof("agent %s simulates %d hosts (%s): %s", config.id(), fleet.hosts().size(), sim.fleet(),
                fleet.hosts().stream().map(h -> h.nodeId()).toList());
        return fleet;
    }

    @Produces
    @Singleton
    GpuBackend gpuBackend(AgentConfig config, SimulatedFleet fleet, Clock clock) {
        HostFacts host = hostFacts(config.host());
        GpuBackend backend = choose(config.backend(),
                () -> openNvml(config.nvml(), host, clock),
                () -> openNvidiaSmi(config.nvidiaSmi(), host, clock),
                () -> fleet,
                LOG::info);
        LOG.infof("agent %s reads GPUs through the %s backend (gpucloud.agent.backend=%s)", config.id(), backend.name(),
                config.backend().name().toLowerCase().replace('_', '-'));
        Path datasets = config.host().datasetCacheDir().filter(d -> !d.isBlank()).map(Path::of).orElse(null);
        InstanceFacts facts = null;
        Path sysfs = null;
        if (backend != fleet) {
            sysfs = Path.of(config.host().sysfsRoot());
            List<RdmaPort> nics = RdmaNics.read(Path.of(config.host().sysfsRoot()));
            LOG.infof("RDMA ports under %s/class/infiniband: %s", config.host().sysfsRoot(), nics.isEmpty() ? "none"
                    : nics.stream().map(p -> p.device() + "/" + p.port() + " " + p.state() + " " + p.linkLayer() + " "
                            + p.rate()).toList());
            Optional<MetadataProvider> cloud = CloudProducer.provider(config.cloud());
            if (cloud.isPresent()) {
                try {
                    facts = cloud.get().instance();
                    LOG.infof("%s metadata: %s", cloud.get().cloud(), facts);
                } catch (MetadataException e) {
                    LOG.warnf("%s metadata: cannot read the instance's facts (%s); the configured ones stand",
                            cloud.get().cloud(), e.getMessage());
                }
            }
        }
        if (datasets != null) {
            LOG.infof("reporting the datasets cached in %s", datasets);
        }
        return datasets == null && facts == null && sysfs == null ? backend
                : new EnrichedBackend(backend, datasets, facts, sysfs);
    }

    @Produces
    @Singleton
    AllocationRunner allocationRunner(AgentConfig config, GpuBackend backend, SimulatedFleet fleet, Clock clock) {
        AgentConfig.Runner runner = config.runner();
        boolean simulatedBackend = EnrichedBackend.unwrap(backend) == fleet;
        AgentConfig.RunnerKind kind = runner.kind();
        if (kind == AgentConfig.RunnerKind.AUTO) {
            kind = simulatedBackend ? AgentConfig.RunnerKind.SIMULATED : AgentConfig.RunnerKind.PROCESS;
        }
        if (kind == AgentConfig.RunnerKind.SIMULATED) {
            if (!simulatedBackend) {
                throw new IllegalStateException("gpucloud.agent.runner.kind=simulated needs the simulated backend, but the "
                        + backend.name() + " backend is in use");
            }
            LOG.infof("agent %s simulates its allocations", config.id());
            return fleet;
        }
        Path dir = runner.dir().filter(d -> !d.isBlank()).map(Path::of)
                .orElse(Path.of(System.getProperty("java.io.tmpdir"), "gpucloud-agent-" + config.id(), "runs"));
        RunnerSettings settings = new RunnerSettings(dir, config.usageInterval(), runner.stopGrace(),
                runner.checkpointSignal(), runner.checkpointTimeout());
        LOG.infof("agent %s runs allocations as processes (%s)", config.id(), settings);
        // on a real host NVML creates the MIG instance a START's slot names, where none is there yet
        MigProvisioner mig = EnrichedBackend.unwrap(backend) instanceof MigProvisioner m ? m : MigProvisioner.NONE;
        // the same credential its records are signed with opens the secrets sealed for it
        // (on Kubernetes AgentMain fetched it before Quarkus booted)
        Enrolment.Credential credential = EnrolmentSigner.credential(Map.of());
        LOG.infof(credential != null
                ? "agent %s opens the secret variables sealed for " + credential.agentId() + " with its credential"
                : "agent %s has no enrolment credential (" + Enrolment.CREDENTIAL_ENV + "): a START's secret"
                        + " variables run only if they come in the clear", config.id());
        return new ProcessRunner(backend.inventory(), settings, clock, mig,
                credential == null ? null : credential.seal());
    }

    void closeRunner(@Disposes AllocationRunner runner) {
        if (runner instanceof ProcessRunner process) {
            process.close();
        }
    }

    void closeBackend(@Disposes GpuBackend backend) {
        if (EnrichedBackend.unwrap(backend) instanceof NvmlBackend nvml) {
            nvml.close();
        }
    }

    /** Opens a real backend, or says why it cannot be used here. */
    @FunctionalInterface
    interface Opener {
        GpuBackend open() throws NvmlUnavailableException;
    }

    /**
     * The backend {@code wanted} names; auto takes the first of nvml, nvidia-smi and simulated that
     * opens, and says why it passed over the others. A named real backend that cannot be opened
     * stops the agent, with the reason.
     */
    static GpuBackend choose(AgentConfig.Backend wanted, Opener nvml, Opener nvidiaSmi, Supplier<GpuBackend> simulated,
            Consumer<String> log) {
        switch (wanted) {
            case SIMULATED:
                return simulated.get();
            case NVML:
                return openOrFail("nvml", nvml);
            case NVIDIA_SMI:
                return openOrFail("nvidia-smi", nvidiaSmi);
            case AUTO:
            default:
                try {
                    return nvml.open();
                } catch (NvmlUnavailableException e) {
                    log.accept("backend auto: nvml not used: " + e.getMessage());
                }
                try {
                    return nvidiaSmi.open();
                } catch (NvmlUnavailableException e) {
                    log.accept("backend auto: nvidia-smi not used: " + e.getMessage());
                }
                return simulated.get();
        }
    }

    private static GpuBackend openOrFail(String name, Opener opener) {
        try {
            return opener.open();
        } catch (NvmlUnavailableException e) {
            throw new IllegalStateException("gpucloud.agent.backend=" + name + " but " + e.getMessage(), e);
        }
    }

    private static GpuBackend openNvml(AgentConfig.Nvml config, HostFacts host, Clock clock)
            throws NvmlUnavailableException {
        Nvml nvml = Nvml.open(config.libraryPath().map(Path::of));
        String driver;
        try {
            driver = nvml.driverVersion();
        } catch (RuntimeException e) {
            driver = "unknown (" + e.getMessage() + ")";
        }
        LOG.infof("NVML loaded from %s, driver %s", nvml.loadedFrom(), driver);
        return new NvmlBackend(nvml, host, clock);
    }

    private static GpuBackend openNvidiaSmi(AgentConfig.NvidiaSmi config, HostFacts host, Clock clock)
            throws NvmlUnavailableException {
        return NvidiaSmiBackend.open(config.path(), config.timeout(), host, clock);
    }

    /** The real host's facts: configured ones, and what the JVM can see (hostname, CPUs, memory). */
    static HostFacts hostFacts(AgentConfig.Host config) {
        String hostname = hostname();
        long memoryMib = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getTotalMemorySize() / (1024 * 1024) : 0;
        return new HostFacts(config.nodeId().filter(id -> !id.isBlank()).orElse(hostname), hostname,
                config.instanceType(), config.zone(), config.capacityType(), config.priceMicrosPerHour(),
                Runtime.getRuntime().availableProcessors() * 1000, memoryMib, config.rdmaFabric().orElse(null),
                config.switchPath().orElse(List.of()));
    }

    private static String hostname() {
        String env = System.getenv("HOSTNAME");
        try {
            String name = InetAddress.getLocalHost().getHostName();
            if (name != null && !name.isBlank()) {
                return name;
            }
        } catch (UnknownHostException e) {
            // fall through to the environment
        }
        return env == null || env.isBlank() ? "localhost" : env;
    }
}
