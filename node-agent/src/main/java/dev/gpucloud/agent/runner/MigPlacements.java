package dev.gpucloud.agent.runner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * NVIDIA's MIG placement rules for the GPU models that have MIG: which GPU-instance profiles a
 * model offers, how many of its 8 memory slices each takes, and at which slices it may start (what
 * {@code nvidia-smi mig -lgipp} prints; NVIDIA's Multi-Instance GPU User Guide, "Supported MIG
 * Profiles"). A 1g profile starts at any slice 0..6; a double-memory 1g or a 2g at 0, 2, 4 (and 6 for
 * the 1g); a 3g takes four slices at 0 or 4; a 4g four slices at 0; a 7g the whole GPU.
 */
public final class MigPlacements {

    /** One GPU-instance profile: its name, compute slices, memory slices, the starts it may use. */
    public record Profile(String name, int computeSlices, int size, List<Integer> starts) {

        public Profile {
            starts = List.copyOf(starts);
        }

        /** True when {@code start} is one of the placements NVIDIA allows for this profile. */
        public boolean allows(int start) {
            return starts.contains(start);
        }

        /** Whether this is the "+me" variant (one slice with all the media engines). */
        public boolean mediaExtensions() {
            return name.endsWith("+me");
        }
    }

    /** The profiles of one MIG-capable GPU family, by name. */
    public record Geometry(String family, Map<String, Profile> profiles) {

        public Optional<Profile> profile(String name) {
            return Optional.ofNullable(profiles.get(name));
        }
    }

    private static Geometry eightSlices(String family, int g1, int g1Double, int g3, int g7) {
        Map<String, Profile> profiles = new LinkedHashMap<>();
        List<Integer> anySlice = List.of(0, 1, 2, 3, 4, 5, 6);
        add(profiles, new Profile("1g." + g1 + "gb", 1, 1, anySlice));
        add(profiles, new Profile("1g." + g1 + "gb+me", 1, 1, anySlice));
        add(profiles, new Profile("1g." + g1Double + "gb", 1, 2, List.of(0, 2, 4, 6)));
        add(profiles, new Profile("2g." + g1Double + "gb", 2, 2, List.of(0, 2, 4)));
        add(profiles, new Profile("3g." + g3 + "gb", 3, 4, List.of(0, 4)));
        add(profiles, new Profile("4g." + g3 + "gb", 4, 4, List.of(0)));
        add(profiles, new Profile("7g." + g7 + "gb", 7, 8, List.of(0)));
        return new Geometry(family, Map.copyOf(profiles));
    }

    private static void add(Map<String, Profile> profiles, Profile profile) {
        profiles.put(profile.name(), profile);
    }

    private static final Geometry A100_40 = eightSlices("A100 40GB", 5, 10, 20, 40);
    private static final Geometry GB_80 = eightSlices("A100/H100 80GB", 10, 20, 40, 80);
    private static final Geometry H100_94 = eightSlices("H100 94GB", 12, 24, 47, 94);
    private static final Geometry H200_141 = eightSlices("H200 141GB", 18, 35, 71, 141);

    private MigPlacements() {
    }

    /** The MIG geometry of a GPU model with this much memory; empty for a model without MIG. */
    public static Optional<Geometry> of(String model, long memoryMib) {
        String m = model.toUpperCase(Locale.ROOT);
        long gb = Math.round(memoryMib / 1024.0);
        if (m.contains("A100")) {
            return Optional.of(gb <= 48 ? A100_40 : GB_80);
        }
        if (m.contains("H200")) {
            return Optional.of(H200_141);
        }
        if (m.contains("H100")) {
            return Optional.of(gb <= 85 ? GB_80 : H100_94);
        }
        return Optional.empty();
    }

    /** The slices [start, start + size) as text, e.g. "slices 4-7". */
    static String range(int start, int size) {
        return size == 1 ? "slice " + start : "slices " + start + "-" + (start + size - 1);
    }
}
