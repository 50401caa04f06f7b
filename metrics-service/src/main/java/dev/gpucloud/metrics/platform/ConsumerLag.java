package dev.gpucloud.metrics.platform;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Consumer lag per group and topic: for each partition a group has committed, the records between its
 * committed offset and the partition's end, summed over the topic's partitions. A group that
 * committed nothing on a topic has no lag there (it reads from the end, or it is not a consumer of it).
 */
public final class ConsumerLag {

    /** One partition of a topic. */
    public record Partition(String topic, int partition) {
    }

    /** The lag of one group on one topic, in records. */
    public record Lag(String group, String topic, long records) {
    }

    private ConsumerLag() {
    }

    /**
     * @param committed per group, each partition's committed offset
     * @param ends each partition's end offset (log end, the next offset to be written)
     * @param groups which groups to report; the others are skipped
     * @param maxSeries the most (group, topic) pairs reported; the rest are left out, sorted by name
     */
    public static List<Lag> of(Map<String, Map<Partition, Long>> committed, Map<Partition, Long> ends,
            Pattern groups, int maxSeries) {
        Map<String, Map<String, Long>> byGroup = new TreeMap<>();
        committed.forEach((group, offsets) -> {
            if (!groups.matcher(group).matches()) {
                return;
            }
            offsets.forEach((partition, offset) -> {
                Long end = ends.get(partition);
                if (end == null || offset == null) {
                    return;
                }
                byGroup.computeIfAbsent(group, g -> new TreeMap<>())
                        .merge(partition.topic(), Math.max(0, end - offset), Long::sum);
            });
        });
        List<Lag> lags = new ArrayList<>();
        for (Map.Entry<String, Map<String, Long>> group : byGroup.entrySet()) {
            for (Map.Entry<String, Long> topic : group.getValue().entrySet()) {
                if (lags.size() >= maxSeries) {
                    return lags;
                }
                lags.add(new Lag(group.getKey(), topic.getKey(), topic.getValue()));
            }
        }
        return lags;
    }
}
