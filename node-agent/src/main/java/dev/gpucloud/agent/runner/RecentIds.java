package dev.gpucloud.agent.runner;

import java.util.LinkedHashMap;
import java.util.Map;

/** Remembers the most recent ids it was given, with a value each, forgetting the oldest beyond its capacity. */
public final class RecentIds {

    private final Map<String, String> ids;

    public RecentIds(int capacity) {
        this.ids = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                return size() > capacity;
            }
        };
    }

    /** True when the id is new; false when it was seen before. */
    public boolean add(String id) {
        return ids.put(id, "") == null;
    }

    /** Remembers {@code id} with {@code value}, e.g. how an allocation ended. */
    public void put(String id, String value) {
        ids.put(id, value);
    }

    /** What was remembered with {@code id}, or null when it is new or forgotten. */
    public String get(String id) {
        return ids.get(id);
    }
}
