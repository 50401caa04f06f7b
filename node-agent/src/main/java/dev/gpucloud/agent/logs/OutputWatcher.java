package dev.gpucloud.agent.logs;

/** Told by a runner when a worker starts writing output and when it has exited (it writes nothing more). */
public interface OutputWatcher {

    /** Watches nothing. */
    OutputWatcher NONE = new OutputWatcher() {
        @Override
        public void started(OutputSource source) {
        }

        @Override
        public void exited(String allocationId) {
        }
    };

    void started(OutputSource source);

    void exited(String allocationId);
}
