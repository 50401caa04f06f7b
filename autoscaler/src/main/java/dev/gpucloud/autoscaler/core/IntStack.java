package dev.gpucloud.autoscaler.core;

import java.util.Arrays;

/** A growable stack of ints: the open hosts with one amount of free GPUs, in the bin packers. */
final class IntStack {

    private int[] items = new int[4];
    private int size;

    void push(int v) {
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size++] = v;
    }

    int pop() {
        return items[--size];
    }

    boolean isEmpty() {
        return size == 0;
    }
}
