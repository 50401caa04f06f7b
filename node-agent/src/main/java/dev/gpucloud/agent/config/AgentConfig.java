package dev.gpucloud.agent.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** The node agent's settings, under {@code gpucloud.agent}. */
@ConfigMapping(prefix = "gpucloud.agent")
public interface AgentConfig {

    /** Names this agent instance: its node.commands consumer group is "node-agent-" + id. */
    @WithDefault("sim-agent")
    String id();

    /** Where GPU facts come from; only the simulated backend exists so far. */
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

    /** Where GPU facts come from. */
    enum Backend {
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
