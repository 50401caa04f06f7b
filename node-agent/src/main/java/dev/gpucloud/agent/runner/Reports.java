package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.UsageEvent;
import java.util.List;

/**
 * What a runner has to tell the world after a command or a tick: allocation lifecycle events,
 * usage intervals, notes (things that happened without an event, such as an ignored repeat), and the
 * hosts whose inventory changed (a MIG slot made a new instance), whose gpu.inventory is due again.
 */
public record Reports(List<AllocationEvent> allocationEvents, List<UsageEvent> usage, List<String> notes,
        List<String> inventoryChanged) {

    private static final Reports NONE = new Reports(List.of(), List.of(), List.of());

    public Reports {
        allocationEvents = List.copyOf(allocationEvents);
        usage = List.copyOf(usage);
        notes = List.copyOf(notes);
        inventoryChanged = List.copyOf(inventoryChanged);
    }

    /** Reports that change no host's inventory. */
    public Reports(List<AllocationEvent> allocationEvents, List<UsageEvent> usage, List<String> notes) {
        this(allocationEvents, usage, notes, List.of());
    }

    public static Reports none() {
        return NONE;
    }

    public static Reports note(String note) {
        return new Reports(List.of(), List.of(), List.of(note));
    }

    public boolean isEmpty() {
        return allocationEvents.isEmpty() && usage.isEmpty() && notes.isEmpty() && inventoryChanged.isEmpty();
    }
}
