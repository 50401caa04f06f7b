package dev.gpucloud.agent.messaging;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.security.SecureRandom;
import java.util.Map;

/**
 * Gives each test run its own agent id (so its own consumer group) and node-id prefix, so runs that
 * share the broker, now or later, never see each other's hosts or commands.
 */
public class UniqueAgentResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        String run = Long.toString(new SecureRandom().nextLong(36L * 36 * 36 * 36 * 36 * 36), 36);
        return Map.of("gpucloud.agent.id", "test-" + run, "gpucloud.agent.sim.node-prefix", "t" + run);
    }

    @Override
    public void stop() {
    }
}
