package dev.gpucloud.scheduler.cluster;

/**
 * One MIG GPU-instance profile of one GPU type, e.g. "3g.40gb" on an A100 80 GB: {@code slices}
 * memory slices wide, placeable only at the listed start slices (NVIDIA's placement rules), with
 * {@code computeSlices} of the GPU's 7 compute slices.
 */
public record MigProfile(String name, int slices, int computeSlices, int[] starts) {

    public MigProfile {
        if (slices < 1 || slices > 8 || starts.length == 0) {
            throw new IllegalArgumentException("MIG profile " + name + " needs 1..8 slices and a start");
        }
        starts = starts.clone();
    }

    /** The occupancy bits this profile takes when placed at {@code start}. */
    public int mask(int start) {
        return ((1 << slices) - 1) << start;
    }

    @Override
    public int[] starts() {
        return starts.clone();
    }

    int start(int i) {
        return starts[i];
    }

    int startCount() {
        return starts.length;
    }
}
