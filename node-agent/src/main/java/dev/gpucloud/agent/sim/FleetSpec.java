package dev.gpucloud.agent.sim;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.MigInstance;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Reads a fleet spec such as {@code "a100x8:1,h100x8:1,a10g:1,v100-spot:1"}: comma-separated
 * entries {@code profile[:count]}, where a profile is a catalog name ({@link HostProfile}) with
 * optional suffixes {@code -spot} (spot capacity at the spot price) and {@code -mig} (every GPU
 * split into seven MIG instances of the smallest profile at slices 0..6; A100 and H100 only). Hosts are named
 * {@code <prefix>-<stem>[-mig][-spot]-<n>}, n counting from 0 per name, so ids and GPU UUIDs stay
 * the same across restarts. Hosts on an RDMA fabric hang four to a leaf switch under spine-1.
 */
public final class FleetSpec {

    /** The most hosts one spec may describe. */
    public static final int MAX_HOSTS = 10_000;

    /** How many hosts share one leaf switch of an RDMA fabric. */
    public static final int HOSTS_PER_LEAF = 4;

    private FleetSpec() {
    }

    /** One kind of host and how many of it, as an entry of the spec says. */
    public record Entry(HostProfile profile, CapacityType capacityType, boolean mig, int count) {
        /** The middle part of the node ids, e.g. "v100-spot". */
        public String stem() {
            return profile.nodeStem() + (mig ? "-mig" : "") + (capacityType == CapacityType.SPOT ? "-spot" : "");
        }

        public long priceMicrosPerHour() {
            return capacityType == CapacityType.SPOT ? profile.spotMicrosPerHour() : profile.onDemandMicrosPerHour();
        }
    }

    /** Parses a spec; a bad entry is an IllegalArgumentException that quotes it and says why. */
    public static List<Entry> parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("fleet spec is empty; expected entries like \"a100x8:1,a10g:2\"");
        }
        List<Entry> entries = new ArrayList<>();
        int total = 0;
        for (String raw : spec.split(",")) {
            String token = raw.strip().toLowerCase(Locale.ROOT);
            if (token.isEmpty()) {
                continue;
            }
            Entry entry = parseEntry(token);
            total += entry.count();
            if (total > MAX_HOSTS) {
                throw new IllegalArgumentException("fleet spec describes more than " + MAX_HOSTS + " hosts");
            }
            entries.add(entry);
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("fleet spec \"" + spec + "\" has no entries");
        }
        return entries;
    }

    private static Entry parseEntry(String token) {
        String name = token;
        int count = 1;
        int colon = token.indexOf(':');
        if (colon >= 0) {
            name = token.substring(0, colon).strip();
            String countText = token.substring(colon + 1).strip();
            try {
                count = Integer.parseInt(countText);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("fleet entry \"" + token + "\": count \"" + countText
                        + "\" is not a whole number");
            }
            if (count < 1) {
                throw new IllegalArgumentException("fleet entry \"" + token + "\": count must be at least 1");
            }
        }
        CapacityType capacity = CapacityType.ON_DEMAND;
        boolean mig = false;
        boolean changed = true;
        while (changed) {
            changed = false;
            if (name.endsWith("-spot")) {
                capacity = CapacityType.SPOT;
                name = name.substring(0, name.length() - "-spot".length());
                changed = true;
            }
            if (name.endsWith("-mig")) {
                mig = true;
                name = name.substring(0, name.length() - "-mig".length());
                changed = true;
            }
        }
        String base = name;
        HostProfile profile = HostProfile.byName(base).orElseThrow(() -> new IllegalArgumentException(
                "fleet entry \"" + token + "\": unknown host profile \"" + base + "\"; known: "
                        + HostProfile.CATALOG.stream().map(HostProfile::name).toList()
                        + ", each with optional -spot and -mig"));
        if (mig && !profile.model().supportsMig()) {
            throw new IllegalArgumentException("fleet entry \"" + token + "\": " + profile.model().modelName
                    + " does not support MIG");
        }
        return new Entry(profile, capacity, mig, count);
    }

    /** The hosts a spec describes, named with {@code nodePrefix}, in {@code zone}. */
    public static List<SimulatedHost> hosts(String spec, String nodePrefix, String zone) {
        List<SimulatedHost> hosts = new ArrayList<>();
        Map<String, Integer> perStem = new HashMap<>();
        Map<String, Integer> perFabric = new HashMap<>();
        Set<String> ids = new HashSet<>();
        for (Entry entry : parse(spec)) {
            for (int i = 0; i < entry.count(); i++) {
                int n = perStem.merge(entry.stem(), 1, Integer::sum) - 1;
                String nodeId = nodePrefix + "-" + entry.stem() + "-" + n;
                if (!ids.add(nodeId)) {
                    throw new IllegalArgumentException("fleet spec names host " + nodeId + " twice");
                }
                String fabric = entry.profile().rdmaFabric();
                List<String> switchPath = List.of();
                if (fabric != null) {
                    int k = perFabric.merge(fabric, 1, Integer::sum) - 1;
                    switchPath = List.of("spine-1", "leaf-" + (1 + k / HOSTS_PER_LEAF));
                }
                hosts.add(new SimulatedHost(nodeId, entry.profile(), entry.capacityType(),
                        entry.priceMicrosPerHour(), zone, fabric, switchPath, gpus(nodeId, entry)));
            }
        }
        return hosts;
    }

    private static List<GpuDevice> gpus(String nodeId, Entry entry) {
        HostProfile profile = entry.profile();
        GpuModel model = profile.model();
        List<GpuDevice> gpus = new ArrayList<>();
        for (int index = 0; index < profile.gpuCount(); index++) {
            List<MigInstance> migs = new ArrayList<>();
            if (entry.mig()) {
                for (int gi = 0; gi < GpuModel.MIG_SLICES; gi++) {
                    migs.add(new MigInstance(gi + 1, model.migProfile,
                            "MIG-" + stableUuid(nodeId + "/gpu/" + index + "/mig/" + (gi + 1)), model.migMemoryMib, gi));
                }
            }
            gpus.add(new GpuDevice(index, "GPU-" + stableUuid(nodeId + "/gpu/" + index), model.modelName,
                    model.memoryMib, String.format(Locale.ROOT, "00000000:%02X:00.0", 0x10 + 0x10 * index),
                    profile.nvlink() ? 0 : -1, entry.mig(), migs));
        }
        return gpus;
    }

    /** A name-based UUID: the same name gives the same UUID on every run. */
    static String stableUuid(String name) {
        return UUID.nameUUIDFromBytes(("gpucloud-sim/" + name).getBytes(StandardCharsets.UTF_8)).toString();
    }
}
