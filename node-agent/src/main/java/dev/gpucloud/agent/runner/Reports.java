package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.UsageEvent;
import java.util.List;

/**
 * What a runner has to tell the world after a command or a tick: allocation lifecycle events,
 * usage intervals, and notes (things that happened without an event, such as an ignored repeat).
 */
public record Reports(List<AllocationEvent> allocationEvents, List<UsageEvent> usage, List<String> notes) {

    private static final Reports NONE = new Reports(List.of(), List.of(), List.of());

    public Reports {
        allocationEvents = List.copyOf(allocationEvents);
        usage = List.copyOf(usage);
        notes = List.copyOf(notes);
    }

    public static Reports none() {
        return NONE;
    }

    public static Reports note(String note) {
        return new Reports(List.of(), List.of(), List.of(note));
    }

    public boolean isEmpty() {
        return allocationEvents.isEmpty() && usage.isEmpty() && notes.isEmpty();
    }
}
