package dev.gpucloud.geometry;

import java.util.List;

/**
 * One GPU-instance profile of one MIG family, e.g. {@code 3g.40gb} on an 80 GB A100: {@code computeSlices}
 * of the family's compute slices, {@code memorySlices} of its memory slices, placeable only at the
 * listed memory-slice starts (ascending, as {@code nvidia-smi mig -lgipp} prints them). A {@code +me}
 * profile also takes the GPU's one set of media engines, so a GPU has at most one of them.
 */
public record MigProfile(String name, int computeSlices, int memorySlices, List<Integer> starts) {

    public MigProfile {
        MigProfileName parsed = MigProfileName.parse(name);
        if (parsed.computeSlices() != computeSlices) {
            throw new IllegalArgumentException("MIG profile " + name + " has " + parsed.computeSlices()
                    + " compute slices by its name, not " + computeSlices);
        }
        if (memorySlices < 1 || memorySlices > MigSlot.MAX_START + 1) {
            throw new IllegalArgumentException("MIG profile " + name + " needs 1..8 memory slices, not " + memorySlices);
        }
        starts = List.copyOf(starts);
        if (starts.isEmpty()) {
            throw new IllegalArgumentException("MIG profile " + name + " needs at least one start");
        }
        for (int i = 0; i < starts.size(); i++) {
            if (starts.get(i) < 0 || (i > 0 && starts.get(i) <= starts.get(i - 1))) {
                throw new IllegalArgumentException("MIG profile " + name + ": starts must ascend from 0, were " + starts);
            }
        }
    }

    /** True when {@code start} is one of the placements NVIDIA allows for this profile. */
    public boolean allows(int start) {
        return starts.contains(start);
    }

    /** Whether this is a {@code +me} profile (it holds the GPU's media engines). */
    public boolean mediaExtensions() {
        return name.endsWith("+me");
    }

    /** The memory slices it takes at {@code start}, e.g. "slices 4-7" or "slice 2". */
    public String describeSlices(int start) {
        return memorySlices == 1 ? "slice " + start : "slices " + start + "-" + (start + memorySlices - 1);
    }
}
