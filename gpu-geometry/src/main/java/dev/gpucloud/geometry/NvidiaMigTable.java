package dev.gpucloud.geometry;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one table of MIG families in gpucloud, from NVIDIA's Multi-Instance GPU User Guide ("Supported
 * MIG Profiles"; the starts are what {@code nvidia-smi mig -lgipp} prints), and how a GPU's model name
 * and memory pick a family. docs/gpu-geometry.md says where each row comes from.
 *
 * <p>An A100, H100 or H200 has 8 memory slices and 7 compute slices: a 1g instance (with or without
 * media engines) starts at any slice 0..6, a double-memory 1g at 0, 2, 4 or 6, a 2g at 0, 2 or 4, a 3g
 * takes four slices at 0 or 4, a 4g four slices at 0, a 7g the whole GPU. An A30 has 4 memory and 4
 * compute slices: 1g at 0..3, 2g at 0 or 2, 4g at 0.
 */
public final class NvidiaMigTable {

    private static final List<Integer> ANY_OF_SEVEN = List.of(0, 1, 2, 3, 4, 5, 6);

    /**
     * The 8-slice families differ only in memory: {@code g1} GB for a 1g, {@code g2} for a double-memory
     * 1g or a 2g, {@code g4} for a 3g or 4g, {@code g8} for the whole GPU.
     */
    private static MigFamily eightSlices(String name, int g1, int g2, int g4, int g8) {
        return new MigFamily(name, 8, 7, List.of(
                new MigProfile("1g." + g1 + "gb", 1, 1, ANY_OF_SEVEN),
                new MigProfile("1g." + g1 + "gb+me", 1, 1, ANY_OF_SEVEN),
                new MigProfile("1g." + g2 + "gb", 1, 2, List.of(0, 2, 4, 6)),
                new MigProfile("2g." + g2 + "gb", 2, 2, List.of(0, 2, 4)),
                new MigProfile("3g." + g4 + "gb", 3, 4, List.of(0, 4)),
                new MigProfile("4g." + g4 + "gb", 4, 4, List.of(0)),
                new MigProfile("7g." + g8 + "gb", 7, 8, List.of(0))));
    }

    public static final MigFamily A30_24GB = new MigFamily("A30 24GB", 4, 4, List.of(
            new MigProfile("1g.6gb", 1, 1, List.of(0, 1, 2, 3)),
            new MigProfile("1g.6gb+me", 1, 1, List.of(0, 1, 2, 3)),
            new MigProfile("2g.12gb", 2, 2, List.of(0, 2)),
            new MigProfile("2g.12gb+me", 2, 2, List.of(0, 2)),
            new MigProfile("4g.24gb", 4, 4, List.of(0))));
    public static final MigFamily A100_40GB = eightSlices("A100 40GB", 5, 10, 20, 40);
    /** The A100 80GB and the H100 80GB share their profiles' names, sizes and starts. */
    public static final MigFamily GB_80 = eightSlices("A100/H100 80GB", 10, 20, 40, 80);
    /** H100 NVL and H100 94GB parts. */
    public static final MigFamily H100_94GB = eightSlices("H100 94GB", 12, 24, 47, 94);
    public static final MigFamily H200_141GB = eightSlices("H200 141GB", 18, 35, 71, 141);

    private static final List<MigFamily> FAMILIES = List.of(A30_24GB, A100_40GB, GB_80, H100_94GB, H200_141GB);
    private static final Set<String> ANY_PROFILE;

    static {
        Set<String> names = new LinkedHashSet<>();
        FAMILIES.forEach(f -> f.profiles().forEach(p -> names.add(p.name())));
        ANY_PROFILE = Set.copyOf(names);
    }

    private static final Pattern GB_IN_NAME = Pattern.compile("(?<![0-9])([0-9]{2,3}) ?GB", Pattern.CASE_INSENSITIVE);

    private NvidiaMigTable() {
    }

    /** Every family the table knows. */
    public static List<MigFamily> families() {
        return FAMILIES;
    }

    /**
     * The family of a GPU of {@code model} (as NVML names it, e.g. "A100-SXM4-80GB", "NVIDIA H100 NVL")
     * with {@code memoryMib} of memory; empty for a model without MIG.
     */
    public static Optional<MigFamily> forGpu(String model, long memoryMib) {
        String m = model.toUpperCase(Locale.ROOT);
        long gb = Math.round(memoryMib / 1024.0);
        if (m.contains("A30")) {
            return Optional.of(A30_24GB);
        }
        if (m.contains("A100")) {
            return Optional.of(gb <= 48 ? A100_40GB : GB_80);
        }
        if (m.contains("H200")) {
            return Optional.of(H200_141GB);
        }
        if (m.contains("H100")) {
            return Optional.of(gb <= 85 ? GB_80 : H100_94GB);
        }
        return Optional.empty();
    }

    /**
     * The family of a model known by name alone (billing's SKUs carry no memory size): the size is read
     * from the name ("A100-SXM4-40GB"), or implied where the model has one size (A30, H200, H100 NVL).
     * Empty for a model without MIG and for one whose size the name leaves open ("A100-PCIE").
     */
    public static Optional<MigFamily> forModelName(String model) {
        String m = model.toUpperCase(Locale.ROOT);
        Matcher gb = GB_IN_NAME.matcher(m);
        if (gb.find()) {
            return forGpu(model, Long.parseLong(gb.group(1)) * 1024);
        }
        if (m.contains("A30") || m.contains("H200")) {
            return forGpu(model, 0);
        }
        if (m.contains("H100") && m.contains("NVL")) {
            return Optional.of(H100_94GB);
        }
        return Optional.empty();
    }

    /**
     * What the scheduler and the agent take a GPU in MIG mode of a model this table does not know for:
     * a family with no profiles, so nothing is placed on it, whole, shared or sliced.
     */
    public static MigFamily unlisted(String model) {
        return new MigFamily("unlisted MIG GPU " + model, 8, 7, List.of());
    }

    /** True for a profile name that some family offers. */
    public static boolean offeredByAny(String profileName) {
        return ANY_PROFILE.contains(profileName);
    }
}
