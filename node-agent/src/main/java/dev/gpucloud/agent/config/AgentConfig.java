package dev.gpucloud.agent.config;

import dev.gpucloud.contracts.events.CapacityType;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The node agent's settings, under {@code gpucloud.agent}. */
@ConfigMapping(prefix = "gpucloud.agent")
public interface AgentConfig {

    /** Names this agent instance: its node.commands consumer group is "node-agent-" + id. */
    @WithDefault("sim-agent")
    String id();

    /** Where GPU facts come from: auto tries nvml, then nvidia-smi, then the simulation. */
    @WithDefault("simulated")
    Backend backend();

    /** How often every host's GPUs are sampled onto gpu.telemetry. */
    @WithDefault("5s")
    Duration telemetryInterval();

    /** How often every host's description is published again on gpu.inventory (also once at start). */
    @WithDefault("5m")
    Duration inventoryInterval();

    /** A running allocation's usage goes to usage.events in intervals of this length, and at its end. */
    @WithDefault("10s")
    Duration usageInterval();

    /** The simulated backend. */
    Sim sim();

    /** How allocations are run: real child processes, or the simulation. */
    Runner runner();

    /** Where usage and allocation events wait for the broker, and how telemetry is shed. */
    Spool spool();

    /** How workers' stdout and stderr are shipped to job.logs. */
    Logs logs();

    /** The cloud metadata service: spot and rebalance notices, instance type, zone and capacity type. */
    Cloud cloud();

    /** The real host the nvml and nvidia-smi backends describe: the facts NVML cannot know. */
    Host host();

    /** The NVML backend. */
    Nvml nvml();

    /** The nvidia-smi backend. */
    NvidiaSmi nvidiaSmi();

    /** Where GPU facts come from. */
    enum Backend {
        /** NVML if it loads, else nvidia-smi if it answers, else the simulation. */
        AUTO,
        /** libnvidia-ml through JNA; the agent does not start without it. */
        NVML,
        /** nvidia-smi --query-gpu; the agent does not start without it. */
        NVIDIA_SMI,
        /** The simulated fleet of {@link Sim}. */
        SIMULATED
    }

    /** The real host's facts beyond its GPUs, until the cloud metadata service is read. */
    interface Host {

        /** This host's node id; the machine's hostname when unset. */
        Optional<String> nodeId();

        /** The cloud instance type, e.g. "p5.48xlarge". */
        @WithDefault("unknown")
        String instanceType();

        /** The availability zone. */
        @WithDefault("unknown")
        String zone();

        /** How the host is bought: on-demand, spot or reserved. */
        @WithDefault("on-demand")
        CapacityType capacityType();

        /** The host's price in millionths of a currency unit per hour. */
        @WithDefault("0")
        long priceMicrosPerHour();

        /** The RDMA fabric the host's NICs are on; none when unset. */
        Optional<String> rdmaFabric();

        /** The RDMA switches from the fabric's top down to the host's leaf, e.g. spine-1,leaf-3. */
        Optional<List<String>> switchPath();

        /** Where sysfs is mounted: RDMA NICs are read from its class/infiniband. */
        @WithDefault("/sys")
        String sysfsRoot();

        /** The local NVMe dataset cache: each sub-directory is a dataset, reported in gpu.inventory's cachedDatasets. */
        Optional<String> datasetCacheDir();
    }

    /** Where libnvidia-ml is. */
    interface Nvml {

        /** The library file, or a folder holding libnvidia-ml.so.1; the dynamic loader's search path when unset. */
        Optional<String> libraryPath();
    }

    /** How nvidia-smi is run. */
    interface NvidiaSmi {

        /** The command: a path, or a name looked up on PATH. */
        @WithDefault("nvidia-smi")
        String path();

        /** How long one query may take before it is killed and recorded as a fault. */
        @WithDefault("10s")
        Duration timeout();
    }

    /** Which cloud's metadata service to read, and how. */
    interface Cloud {

        /** none, aws (IMDSv2), gcp or azure (Scheduled Events). */
        @WithDefault("none")
        CloudProvider provider();

        /** The metadata service's base URL; the cloud's own address when unset. */
        Optional<String> endpoint();

        /** How long one metadata request may take. */
        @WithDefault("2s")
        Duration timeout();

        /** How often notices are polled (AWS updates instance-action every 5 s). */
        @WithDefault("5s")
        Duration pollInterval();
    }

    /** The clouds whose metadata services the agent reads. */
    enum CloudProvider {
        /** No metadata service (a simulated fleet, or a machine outside a cloud). */
        NONE,
        /** EC2 instance metadata, IMDSv2. */
        AWS,
        /** Compute Engine metadata. */
        GCP,
        /** Azure Instance Metadata Service and its Scheduled Events. */
        AZURE
    }

    /** The durable spool of usage and allocation events, and the telemetry queue. */
    interface Spool {

        /** The spool's directory; a temp folder named after the agent id when unset. */
        Optional<String> dir();

        /** Force each spooled batch to disk before it counts as written (off only for benchmarks). */
        @WithDefault("true")
        boolean fsync();

        /** How many spooled records one sending round sends at most. */
        @WithDefault("500")
        int batch();

        /**
         * How many telemetry samples may wait for the broker: one per host (a newer sample replaces the waiting
         * one), so at least the hosts this agent runs; beyond that the oldest are shed (and counted).
         */
        @WithDefault("10000")
        int telemetryQueue();

        /** How many telemetry samples may be in flight to the broker at once. */
        @WithDefault("256")
        int telemetryInFlight();
    }

    /** How workers' output is shipped (docs/node-agent.md, "Job output"). */
    interface Logs {

        /** Ship workers' output to job.logs at all. */
        @WithDefault("true")
        boolean enabled();

        /** Whether the simulated runner's workers write (and ship) a few lines of output, as a real one would. */
        @WithDefault("true")
        boolean simulated();

        /** How often every worker's files are looked at for new output. */
        @WithDefault("100ms")
        Duration poll();

        /** The bytes per second one worker's output may be shipped at; more waits in its files. */
        @WithDefault("1048576")
        long bytesPerSecond();

        /** A worker whose unshipped output grows past this many bytes has it skipped, with a line that says so. */
        @WithDefault("16777216")
        long backlogLimit();

        /** How long a last line without its newline waits for it before it is shipped as it is. */
        @WithDefault("2s")
        Duration tailWait();
    }

    /** How allocations are run. */
    interface Runner {

        /** auto runs real processes with a real GPU backend and simulates runs with the simulated one. */
        @WithDefault("auto")
        RunnerKind kind();

        /** Each allocation gets a working directory (and its output.log) under here; a temp folder when unset. */
        Optional<String> dir();

        /** How long a stopped workload has between SIGTERM and SIGKILL. */
        @WithDefault("30s")
        Duration stopGrace();

        /** The signal that asks a workload to save a checkpoint. */
        @WithDefault("SIGUSR1")
        String checkpointSignal();

        /** How long a checkpoint may take when the CHECKPOINT command names no deadline. */
        @WithDefault("10m")
        Duration checkpointTimeout();
    }

    /** Which runner carries out node.commands. */
    enum RunnerKind {
        /** process for the nvml and nvidia-smi backends, simulated for the simulated backend. */
        AUTO,
        /** Real child processes, on whichever hosts the backend describes (simulated ones included). */
        PROCESS,
        /** The simulated fleet's runs (only with the simulated backend's hosts). */
        SIMULATED
    }

    /** How the simulated fleet looks and behaves. */
    interface Sim {

        /** The simulated hosts as "profile[:count]" entries, e.g. "a100x8:2,a10g:1,v100-spot:1" (see docs/node-agent.md). */
        @WithDefault("a100x8:1,h100x8:1,a10g:1,v100-spot:1")
        String fleet();

        /** Node ids start with this, e.g. "sim" gives sim-a100-0; give each agent sharing a broker its own. */
        @WithDefault("sim")
        String nodePrefix();

        /** The availability zone every simulated host reports. */
        @WithDefault("local-1a")
        String zone();

        /** How long a run lasts when its command is not ["sleep", "N"] and its env has no GPUCLOUD_SIM_SECONDS. */
        @WithDefault("30s")
        Duration defaultRunDuration();

        /** How long a simulated checkpoint takes to save before CHECKPOINT_SAVED is reported. */
        @WithDefault("2s")
        Duration checkpointSave();

        /** The seed every simulated reading is drawn from: the same seed and history give the same readings. */
        @WithDefault("42")
        long seed();
    }
}
