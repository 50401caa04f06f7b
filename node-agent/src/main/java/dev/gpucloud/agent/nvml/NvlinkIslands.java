package dev.gpucloud.agent.nvml;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Groups a host's GPUs into NVLink islands: GPUs joined by active links, directly or through the
 * same NVSwitch, share an island. Islands are numbered 0, 1... in the order of their lowest GPU
 * index; a GPU at neither end of an active link is in none (-1).
 */
public final class NvlinkIslands {

    private NvlinkIslands() {
    }

    /**
     * @param busIds each GPU's PCI bus id, by GPU index
     * @param remotes the bus ids at the far end of each GPU's active links, by GPU index
     * @return each GPU's island, by GPU index
     */
    public static SortedMap<Integer, Integer> of(Map<Integer, String> busIds, Map<Integer, List<String>> remotes) {
        Map<String, String> parent = new HashMap<>();
        Map<Integer, String> gpuNode = new TreeMap<>();
        Set<String> linked = new HashSet<>();
        busIds.forEach((index, busId) -> gpuNode.put(index, normalize(busId)));
        for (Map.Entry<Integer, List<String>> entry : remotes.entrySet()) {
            String from = gpuNode.get(entry.getKey());
            if (from == null) {
                continue;
            }
            for (String remote : entry.getValue()) {
                String to = normalize(remote);
                union(parent, from, to);
                linked.add(from);
                linked.add(to);
            }
        }
        SortedMap<Integer, Integer> islands = new TreeMap<>();
        Map<String, Integer> numbers = new LinkedHashMap<>();
        for (Map.Entry<Integer, String> gpu : gpuNode.entrySet()) {
            if (!linked.contains(gpu.getValue())) {
                islands.put(gpu.getKey(), -1);
            } else {
                String root = find(parent, gpu.getValue());
                islands.put(gpu.getKey(), numbers.computeIfAbsent(root, r -> numbers.size()));
            }
        }
        return islands;
    }

    /** "0000:18:00.0", "00000000:18:00.0" and "00000000:18:00.0 " name the same device. */
    static String normalize(String busId) {
        String trimmed = busId.strip().toUpperCase(Locale.ROOT);
        String[] parts = trimmed.split(":");
        if (parts.length == 3) {
            try {
                long domain = Long.parseLong(parts[0], 16);
                return String.format(Locale.ROOT, "%08X:%s:%s", domain, parts[1], parts[2]);
            } catch (NumberFormatException e) {
                return trimmed;
            }
        }
        return trimmed;
    }

    private static String find(Map<String, String> parent, String node) {
        String root = node;
        while (parent.containsKey(root)) {
            root = parent.get(root);
        }
        return root;
    }

    private static void union(Map<String, String> parent, String a, String b) {
        String rootA = find(parent, a);
        String rootB = find(parent, b);
        if (!rootA.equals(rootB)) {
            parent.put(rootB, rootA);
        }
    }
}
