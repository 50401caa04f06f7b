package dev.gpucloud.billing.repository;

import java.util.List;

/**
 * A snapshot was refused because a partition's stored offset is no longer the one its fold loaded: another
 * consumer (after a rebalance) has written it since, so this fold's memory is stale. Nothing was written.
 */
public class StaleFoldException extends RuntimeException {

    /** A topic partition. */
    public record Partition(String topic, int partition) {
        @Override
        public String toString() {
            return topic + "-" + partition;
        }
    }

    private final List<Partition> stale;

    public StaleFoldException(List<Partition> stale) {
        super("stored offsets of " + stale + " moved since this consumer loaded them: another consumer owns them now;"
                + " the snapshot is refused and their fold is dropped");
        this.stale = List.copyOf(stale);
    }

    public List<Partition> stale() {
        return stale;
    }
}
