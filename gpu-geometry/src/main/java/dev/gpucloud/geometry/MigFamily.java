package dev.gpucloud.geometry;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The MIG rules of one GPU family (an A100 40GB, an A30...): its memory and compute slices and the
 * profiles it offers. What a GPU holds is an occupancy mask: bit {@code i} for memory slice {@code i},
 * and one more bit, just above the slices, for the media engines a {@code +me} instance takes. Two
 * instances can coexist exactly when their masks do not meet, which is NVIDIA's placement rule plus
 * "one +me instance per GPU". The families themselves are in {@link NvidiaMigTable}.
 */
public final class MigFamily {

    private final String name;
    private final int memorySlices;
    private final int computeSlices;
    private final List<MigProfile> profiles;
    private final Map<String, MigProfile> byName = new HashMap<>();
    private final MigPacking packing;

    MigFamily(String name, int memorySlices, int computeSlices, List<MigProfile> profiles) {
        this.name = name;
        this.memorySlices = memorySlices;
        this.computeSlices = computeSlices;
        this.profiles = List.copyOf(profiles);
        for (MigProfile p : this.profiles) {
            if (p.memorySlices() > memorySlices || p.computeSlices() > computeSlices
                    || p.starts().get(p.starts().size() - 1) + p.memorySlices() > memorySlices) {
                throw new IllegalArgumentException(p.name() + " does not fit a " + name);
            }
            if (byName.put(p.name(), p) != null) {
                throw new IllegalArgumentException(name + " lists " + p.name() + " twice");
            }
        }
        this.packing = new MigPacking(this);
    }

    public String name() {
        return name;
    }

    public int memorySlices() {
        return memorySlices;
    }

    /** The compute slices of the whole GPU: what a profile's compute slices are a share of. */
    public int computeSlices() {
        return computeSlices;
    }

    /** The profiles, in NVIDIA's order (smallest first). */
    public List<MigProfile> profiles() {
        return profiles;
    }

    public Optional<MigProfile> profile(String profileName) {
        return Optional.ofNullable(profileName == null ? null : byName.get(profileName));
    }

    /** The position of the named profile in {@link #profiles()}, or -1 when this family has none. */
    public int ordinal(String profileName) {
        MigProfile p = byName.get(profileName);
        return p == null ? -1 : profiles.indexOf(p);
    }

    /** The bits of every memory slice. */
    public int fullMask() {
        return (1 << memorySlices) - 1;
    }

    /** The bit of the media engines, which a {@code +me} instance holds. */
    public int mediaBit() {
        return 1 << memorySlices;
    }

    /** The occupancy of {@code profile} placed at {@code start}: its memory slices, plus the media bit for +me. */
    public int occupancy(MigProfile profile, int start) {
        int slices = ((1 << profile.memorySlices()) - 1) << start;
        return profile.mediaExtensions() ? slices | mediaBit() : slices;
    }

    /**
     * The occupancy of an existing instance as a GPU reports it: one of a profile this family does not
     * list counts as one slice; one whose start is unknown might be anywhere, so it counts as everything.
     */
    public int occupancy(String profileName, Integer start) {
        if (start == null) {
            return fullMask() | mediaBit();
        }
        MigProfile p = byName.get(profileName);
        return p != null ? occupancy(p, start) : (1 << start) & fullMask();
    }

    /** How many of the memory slices {@code usedMask} holds. */
    public int slicesUsed(int usedMask) {
        return Integer.bitCount(usedMask & fullMask());
    }

    /** Whether nothing more can go on a GPU holding {@code usedMask}: every memory slice is held. */
    public boolean isFull(int usedMask) {
        return (usedMask & fullMask()) == fullMask();
    }

    /**
     * Where the scheduler puts {@code profile} on a GPU holding {@code usedMask}: the free legal start
     * that leaves the most room for larger profiles, or -1 when there is none (see {@link MigPacking}).
     */
    public int bestStart(MigProfile profile, int usedMask) {
        return packing.bestStart(profile, usedMask);
    }

    /**
     * How full (percent of memory slices) a GPU holding {@code usedMask} is after taking the profile at
     * {@code ordinal} at its {@linkplain #bestStart best start}, or -1 when it cannot take it.
     */
    public int percentAfter(int ordinal, int usedMask) {
        return packing.percentAfter(ordinal, usedMask);
    }

    /** The room a GPU holding {@code usedMask} still offers, weighted towards the larger profiles. */
    public int room(int usedMask) {
        return packing.room(usedMask);
    }

    @Override
    public String toString() {
        return name;
    }
}
