package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.geometry.MigProfile;

/**
 * Creates and destroys MIG instances on a real host's GPUs (NVML on a real host). A refusal, from
 * the driver or for lack of a way to do it, is a {@link MigRefusedException} that says why; the
 * runner answers the START with it.
 */
public interface MigProvisioner {

    /**
     * Creates a GPU instance of {@code profile} at slice {@code start} of GPU {@code gpuIndex}, with
     * one compute instance spanning it, and returns it as inventory describes it.
     */
    MigInstance create(int gpuIndex, MigProfile profile, int start);

    /** Destroys the idle instance {@code mig} of GPU {@code gpuIndex} (its compute instances, then itself). */
    void destroy(int gpuIndex, MigInstance mig);

    /** A host whose MIG layout this agent cannot change: every request is refused. */
    MigProvisioner NONE = new MigProvisioner() {
        @Override
        public MigInstance create(int gpuIndex, MigProfile profile, int start) {
            throw new MigRefusedException("this agent's backend cannot create MIG instances (only NVML can)");
        }

        @Override
        public void destroy(int gpuIndex, MigInstance mig) {
            throw new MigRefusedException("this agent's backend cannot destroy MIG instances (only NVML can)");
        }
    };
}
