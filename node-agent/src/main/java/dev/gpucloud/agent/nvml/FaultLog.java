package dev.gpucloud.agent.nvml;

import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The recent faults of a real backend, newest last, at most {@link #CAPACITY}. A fault is logged
 * when a GPU's reason changes, not on every sample, so a lost GPU sampled at 1 Hz logs once.
 */
public final class FaultLog {

    /** How many faults are kept. */
    public static final int CAPACITY = 256;

    private static final System.Logger LOG = System.getLogger(FaultLog.class.getName());

    private final ArrayDeque<GpuFault> faults = new ArrayDeque<>();
    private final Map<Integer, String> lastReason = new HashMap<>();
    private final Map<Integer, Instant> lastAt = new HashMap<>();

    /** Records a fault of one GPU (or -1: the backend as a whole). */
    public synchronized void record(Instant at, int gpuIndex, String message) {
        if (faults.size() == CAPACITY) {
            faults.removeFirst();
        }
        faults.addLast(new GpuFault(at, gpuIndex, message));
        lastAt.put(gpuIndex, at);
        if (!message.equals(lastReason.put(gpuIndex, message))) {
            LOG.log(Level.WARNING, gpuIndex < 0 ? message : "GPU " + gpuIndex + ": " + message);
        }
    }

    /** The GPU was read at {@code at}; unless that read recorded a fault, its next fault is logged again. */
    public synchronized void clear(int gpuIndex, Instant at) {
        if (!at.equals(lastAt.get(gpuIndex)) && lastReason.remove(gpuIndex) != null) {
            LOG.log(Level.INFO, gpuIndex < 0 ? "backend reads cleanly again" : "GPU " + gpuIndex + " reads cleanly again");
        }
    }

    /** The faults kept, oldest first. */
    public synchronized List<GpuFault> recent() {
        return List.copyOf(faults);
    }
}
