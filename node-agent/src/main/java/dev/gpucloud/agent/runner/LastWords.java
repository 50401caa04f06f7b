package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The last lifecycle event this host sent for each of its most recent allocations (STARTED while it
 * runs, then EXITED or LOST), so a question about an allocation is answered from it. A STATUS gets
 * that event again; a STOP of an allocation that already ended gets its end again (the scheduler asks
 * when it missed how an allocation ended); a CHECKPOINT of one that ended is only noted; an allocation
 * never seen here is answered with LOST, so the scheduler learns this host does not run it.
 */
public final class LastWords {

    private final Map<String, AllocationEvent> lastWord;

    public LastWords(int capacity) {
        this.lastWord = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, AllocationEvent> eldest) {
                return size() > capacity;
            }
        };
    }

    /** Remembers a STARTED, EXITED or LOST event this host sent (checkpoints are not a lifecycle word). */
    public void said(AllocationEvent event) {
        if (event.type() != AllocationEventType.CHECKPOINT_SAVED) {
            lastWord.remove(event.allocationId());
            lastWord.put(event.allocationId(), event);
        }
    }

    /** The last lifecycle event of {@code allocationId}, or null when it is unknown here (never ran, or long forgotten). */
    public AllocationEvent lastWord(String allocationId) {
        return lastWord.get(allocationId);
    }

    /**
     * The answer to a STATUS, or to a CHECKPOINT or STOP of an allocation that does not run here: an
     * event to send (or null) and a note (or null).
     */
    public Answer answer(NodeCommand command, Instant now) {
        AllocationEvent last = lastWord.get(command.allocationId());
        String asked = command.type() + " " + command.commandId()
                + (command.reason() == null ? "" : " (" + command.reason() + ")");
        if (last == null) {
            return new Answer(new AllocationEvent(command.allocationId(), command.jobId(), command.nodeId(),
                    AllocationEventType.LOST, now, null, null, "unknown allocation: " + command.allocationId()
                            + " does not run on " + command.nodeId() + " (" + asked + ")"), null);
        }
        String how = switch (last.type()) {
            case STARTED -> "runs (started " + last.occurredAt() + ")";
            case EXITED -> "already exited " + last.exitCode();
            default -> "was already lost";
        };
        if (command.type() == NodeCommandType.STATUS
                || command.type() == NodeCommandType.STOP && last.type() != AllocationEventType.STARTED) {
            return new Answer(last, "answered " + asked + " of " + command.allocationId() + ", which " + how
                    + ", with its " + last.type() + " again");
        }
        return new Answer(null, "ignored " + asked + ": " + command.allocationId() + " " + how);
    }

    /**
     * Answers {@code command} into a runner's report: the event joins {@code events} unless this very
     * report already says it (an end that fell due just before the command), the note joins {@code notes}.
     */
    public void answer(NodeCommand command, Instant now, java.util.List<AllocationEvent> events,
            java.util.List<String> notes) {
        Answer answer = answer(command, now);
        if (answer.event() != null && !events.contains(answer.event())) {
            events.add(answer.event());
        }
        if (answer.note() != null) {
            notes.add(answer.note());
        }
    }

    /** An event to send (or null) and a note for the log (or null). */
    public record Answer(AllocationEvent event, String note) {
    }
}
