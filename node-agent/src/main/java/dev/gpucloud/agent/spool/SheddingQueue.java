package dev.gpucloud.agent.spool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A bounded queue for telemetry, which may be lost: when it is full, the oldest item makes room
 * for the newest, and the loss is counted. Thread-safe.
 */
public final class SheddingQueue<T> {

    private final int capacity;
    private final ArrayDeque<T> items = new ArrayDeque<>();
    private long shed;

    public SheddingQueue(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
    }

    /** Adds {@code item}; the oldest is dropped (and counted) when the queue is full. */
    public synchronized void offer(T item) {
        if (items.size() == capacity) {
            items.pollFirst();
            shed++;
        }
        items.addLast(item);
    }

    /** Takes up to {@code max} items, oldest first. */
    public synchronized List<T> poll(int max) {
        List<T> out = new ArrayList<>(Math.min(max, items.size()));
        while (out.size() < max && !items.isEmpty()) {
            out.add(items.pollFirst());
        }
        return out;
    }

    public synchronized int size() {
        return items.size();
    }

    /** How many items were dropped to make room, since the start. */
    public synchronized long shed() {
        return shed;
    }
}
