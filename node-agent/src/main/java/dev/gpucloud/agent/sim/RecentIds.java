package dev.gpucloud.agent.sim;

import java.util.LinkedHashMap;
import java.util.Map;

/** Remembers the most recent ids it was given, forgetting the oldest beyond its capacity. */
final class RecentIds {

    private final Map<String, Boolean> ids;

    RecentIds(int capacity) {
        this.ids = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > capacity;
            }
        };
    }

    /** True when the id is new; false when it was seen before. */
    boolean add(String id) {
        return ids.put(id, Boolean.TRUE) == null;
    }
}
