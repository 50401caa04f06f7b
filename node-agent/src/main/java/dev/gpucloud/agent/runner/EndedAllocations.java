package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The last word on each allocation that ended here (its EXITED or LOST event), for the most recent
 * ones: a command for an allocation that no longer runs is answered from it. A STOP gets that event
 * again (the scheduler asks when it missed how an allocation ended); a CHECKPOINT is only noted; an
 * allocation never seen here is answered with LOST, so the scheduler learns this host does not run it.
 */
public final class EndedAllocations {

    private final Map<String, AllocationEvent> lastWord;

    public EndedAllocations(int capacity) {
        this.lastWord = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, AllocationEvent> eldest) {
                return size() > capacity;
            }
        };
    }

    /** Remembers how an allocation ended: its EXITED or LOST event. */
    public void ended(AllocationEvent last) {
        lastWord.put(last.allocationId(), last);
    }

    /** How {@code allocationId} ended, or null when it is unknown here (never ran, or long forgotten). */
    public AllocationEvent lastWord(String allocationId) {
        return lastWord.get(allocationId);
    }

    /** The answer to {@code command} for an allocation that does not run here: an event to send, or a note. */
    public Answer answer(NodeCommand command, Instant now) {
        AllocationEvent last = lastWord.get(command.allocationId());
        String asked = command.type() + " " + command.commandId()
                + (command.reason() == null ? "" : " (" + command.reason() + ")");
        if (last == null) {
            return new Answer(new AllocationEvent(command.allocationId(), command.jobId(), command.nodeId(),
                    AllocationEventType.LOST, now, null, null, "unknown allocation: " + command.allocationId()
                            + " does not run on " + command.nodeId() + " (" + asked + ")"), null);
        }
        String how = last.type() == AllocationEventType.EXITED ? "exited " + last.exitCode() : "was lost";
        if (command.type() == NodeCommandType.STOP) {
            return new Answer(last, "answered " + asked + " of " + command.allocationId() + ", which already " + how
                    + ", with its " + last.type() + " again");
        }
        return new Answer(null, "ignored " + asked + ": " + command.allocationId() + " already " + how);
    }

    /** An event to send (or null) and a note for the log (or null). */
    public record Answer(AllocationEvent event, String note) {
    }
}
