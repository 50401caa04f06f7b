package dev.gpucloud.agent.config;

import dev.gpucloud.agent.sim.SimulatedFleet;
import dev.gpucloud.agent.sim.SimulationSettings;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import org.jboss.logging.Logger;

/**
 * Chooses the agent's GPU backend and runner from configuration. The simulated fleet is both: it
 * describes its hosts and runs their allocations.
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
    SimulatedFleet simulatedFleet(AgentConfig config, Clock clock) {
        AgentConfig.Sim sim = config.sim();
        SimulationSettings settings = new SimulationSettings(sim.fleet(), sim.nodePrefix(), sim.zone(), sim.seed(),
                config.usageInterval(), sim.defaultRunDuration(), sim.checkpointSave());
        SimulatedFleet fleet = new SimulatedFleet(settings, clock);
        LOG.infof("agent %s simulates %d hosts (%s): %s", config.id(), fleet.hosts().size(), sim.fleet(),
                fleet.hosts().stream().map(h -> h.nodeId()).toList());
        return fleet;
    }
}
