package dev.gpucloud.scheduler.cluster;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The MIG layout rules of one GPU type: how many memory slices it has and which profiles fit where.
 * Tables from NVIDIA's Multi-Instance GPU User Guide ("Supported MIG Profiles" and the placements
 * that {@code nvidia-smi mig -lgipp} prints): an A100 or H100 has 8 memory slices and 7 compute
 * slices; a 1g profile may start at slices 0..6, a 1g double-memory or 2g profile at 0, 2, 4 (and 6
 * for 1g), a 3g at 0 or 4, a 4g at 0 and a 7g takes the whole GPU. An A30 has 4 slices.
 */
public final class MigGeometry {

    private final String family;
    private final int slots;
    private final List<MigProfile> profiles;
    private final Map<String, MigProfile> byName;
    private final Map<MigProfile, int[]> bestByMask;
    private final int[][] percentAfter;

    private MigGeometry(String family, int slots, List<MigProfile> profiles) {
        this.family = family;
        this.slots = slots;
        this.profiles = List.copyOf(profiles);
        this.byName = profiles.stream().collect(Collectors.toUnmodifiableMap(MigProfile::name, p -> p));
        // every occupancy of the slices is one of 2^slots masks: decide each placement once, here
        Map<MigProfile, int[]> table = new java.util.IdentityHashMap<>();
        for (MigProfile p : this.profiles) {
            int[] best = new int[1 << slots];
            for (int mask = 0; mask < best.length; mask++) {
                best[mask] = searchBestStart(p, mask);
            }
            table.put(p, best);
        }
        this.bestByMask = table;
        // and how full the GPU is after each profile's best placement: what packing ranks MIG GPUs by
        this.percentAfter = new int[this.profiles.size()][1 << slots];
        for (int k = 0; k < this.profiles.size(); k++) {
            MigProfile p = this.profiles.get(k);
            int[] best = table.get(p);
            for (int mask = 0; mask < best.length; mask++) {
                percentAfter[k][mask] = best[mask] < 0 ? -1 : 100 * (Integer.bitCount(mask) + p.slices()) / slots;
            }
        }
    }

    /** The position of the named profile in {@link #profiles()}, or -1 when this GPU type has none. */
    public int ordinal(String name) {
        MigProfile p = byName.get(name);
        return p == null ? -1 : profiles.indexOf(p);
    }

    /**
     * How full (percent of memory slices) a GPU with {@code usedMask} is after taking the profile at
     * {@code ordinal} at its best start, or -1 when it has no free legal start for it.
     */
    public int percentAfter(int ordinal, int usedMask) {
        return percentAfter[ordinal][usedMask & fullMask()];
    }

    private static MigGeometry eightSlices(String family, int g1, int g1Double, int g3, int g7) {
        return new MigGeometry(family, 8, List.of(
                new MigProfile("1g." + g1 + "gb", 1, 1, new int[] {6, 5, 4, 3, 2, 1, 0}),
                new MigProfile("1g." + g1Double + "gb", 2, 1, new int[] {6, 4, 2, 0}),
                new MigProfile("2g." + g1Double + "gb", 2, 2, new int[] {4, 2, 0}),
                new MigProfile("3g." + g3 + "gb", 4, 3, new int[] {4, 0}),
                new MigProfile("4g." + g3 + "gb", 4, 4, new int[] {0}),
                new MigProfile("7g." + g7 + "gb", 8, 7, new int[] {0})));
    }

    private static final MigGeometry A100_40 = eightSlices("A100 40GB", 5, 10, 20, 40);
    private static final MigGeometry A100_80 = eightSlices("A100/H100 80GB", 10, 20, 40, 80);
    private static final MigGeometry H100_94 = eightSlices("H100 94GB", 12, 24, 47, 94);
    private static final MigGeometry H200_141 = eightSlices("H200 141GB", 18, 35, 71, 141);
    private static final MigGeometry A30_24 = new MigGeometry("A30 24GB", 4, List.of(
            new MigProfile("1g.6gb", 1, 1, new int[] {3, 2, 1, 0}),
            new MigProfile("2g.12gb", 2, 2, new int[] {2, 0}),
            new MigProfile("4g.24gb", 4, 4, new int[] {0})));

    /** The geometry of a GPU model with this much memory, if the model supports MIG at all. */
    public static Optional<MigGeometry> of(String model, long memoryMib) {
        String m = model.toUpperCase(Locale.ROOT);
        long gb = Math.round(memoryMib / 1024.0);
        if (m.contains("A30")) {
            return Optional.of(A30_24);
        }
        if (m.contains("A100")) {
            return Optional.of(gb <= 48 ? A100_40 : A100_80);
        }
        if (m.contains("H200")) {
            return Optional.of(H200_141);
        }
        if (m.contains("H100")) {
            return Optional.of(gb <= 85 ? A100_80 : H100_94);
        }
        return Optional.empty();
    }

    public Optional<MigProfile> profile(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public List<MigProfile> profiles() {
        return profiles;
    }

    public int slots() {
        return slots;
    }

    public String family() {
        return family;
    }

    /**
     * Where {@code profile} would go on a GPU whose used slices are {@code usedMask}: the start that
     * leaves the most room for the larger profiles (small slices fill from the top, so a 3g or 4g
     * stays placeable at 0), or -1 when no legal start is free.
     */
    public int bestStart(MigProfile profile, int usedMask) {
        int[] table = bestByMask.get(profile);
        return table != null ? table[usedMask & fullMask()] : searchBestStart(profile, usedMask);
    }

    private int searchBestStart(MigProfile profile, int usedMask) {
        int best = -1;
        int bestRoom = -1;
        for (int i = 0; i < profile.startCount(); i++) {
            int start = profile.start(i);
            int mask = profile.mask(start);
            if ((usedMask & mask) != 0) {
                continue;
            }
            int room = room(usedMask | mask);
            if (room > bestRoom) {
                best = start;
                bestRoom = room;
            }
        }
        return best;
    }

    /**
     * How much room a GPU with {@code usedMask} still offers: the sum over profiles of the largest
     * slice count each can still take, weighted by size, so that keeping a 4g/3g placement open
     * counts for more than keeping a 1g one.
     */
    public int room(int usedMask) {
        int room = 0;
        for (MigProfile p : profiles) {
            for (int i = 0; i < p.startCount(); i++) {
                if ((usedMask & p.mask(p.start(i))) == 0) {
                    room += p.slices() * p.slices();
                    break;
                }
            }
        }
        return room;
    }

    public int fullMask() {
        return (1 << slots) - 1;
    }
}
