package dev.gpucloud.geometry;

import java.util.List;

/**
 * The scheduler's choice of start for a MIG profile on one family, decided once per occupancy mask:
 * of the legal, free starts it takes the one that leaves the most room (so small instances fill from
 * the top and a 3g or 4g stays placeable at slice 0). Whether a start fits is {@link GpuAdmission#slot}.
 */
final class MigPacking {

    private final MigFamily family;
    private final int[][] bestStart;
    private final int[][] percentAfter;

    MigPacking(MigFamily family) {
        this.family = family;
        List<MigProfile> profiles = family.profiles();
        int masks = 1 << (family.memorySlices() + 1); // every slice bit and the media bit
        this.bestStart = new int[profiles.size()][masks];
        this.percentAfter = new int[profiles.size()][masks];
        for (int k = 0; k < profiles.size(); k++) {
            MigProfile p = profiles.get(k);
            for (int mask = 0; mask < masks; mask++) {
                int start = search(p, mask);
                bestStart[k][mask] = start;
                percentAfter[k][mask] = start < 0 ? -1
                        : 100 * (family.slicesUsed(mask) + p.memorySlices()) / family.memorySlices();
            }
        }
    }

    int bestStart(MigProfile profile, int usedMask) {
        int k = family.ordinal(profile.name());
        return k >= 0 ? bestStart[k][usedMask & all()] : search(profile, usedMask);
    }

    int percentAfter(int ordinal, int usedMask) {
        return percentAfter[ordinal][usedMask & all()];
    }

    /** The sum over profiles of their squared memory slices, for each profile that still has a free start. */
    int room(int usedMask) {
        int room = 0;
        for (MigProfile p : family.profiles()) {
            for (int start : p.starts()) {
                if ((usedMask & family.occupancy(p, start)) == 0) {
                    room += p.memorySlices() * p.memorySlices();
                    break;
                }
            }
        }
        return room;
    }

    private int all() {
        return family.fullMask() | family.mediaBit();
    }

    private int search(MigProfile profile, int usedMask) {
        int best = -1;
        int bestRoom = -1;
        List<Integer> starts = profile.starts();
        for (int i = starts.size() - 1; i >= 0; i--) { // from the top: on a tie the highest start wins
            int start = starts.get(i);
            if (!GpuAdmission.slot(family, profile.name(), start, usedMask).admitted()) {
                continue;
            }
            int room = room(usedMask | family.occupancy(profile, start));
            if (room > bestRoom) {
                best = start;
                bestRoom = room;
            }
        }
        return best;
    }
}
