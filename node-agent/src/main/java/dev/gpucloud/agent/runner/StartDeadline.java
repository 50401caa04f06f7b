package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import java.time.Instant;

/**
 * A START comes with the time by which its host must start it ({@code deadline}): until then the scheduler
 * cannot have counted the allocation lost for the host's silence; after it, it may have, and may have placed
 * other work on those GPUs. A START that arrives late (the host was cut off, its commands waited in the
 * broker) is therefore not started: it is answered LOST, and the scheduler, which either lost it already or
 * requeues its job now, places the job afresh. Started anyway, it would hold GPUs the scheduler counts free,
 * refuse the job's next attempt there, and be billed for an attempt the platform gave up.
 */
public final class StartDeadline {

    private StartDeadline() {
    }

    /** The LOST answer to a START that came after its deadline, or null when it may start. */
    public static AllocationEvent late(NodeCommand command, Instant now) {
        if (command.type() != NodeCommandType.START || command.deadline() == null || !now.isAfter(command.deadline())) {
            return null;
        }
        return AllocationEvent.late(command.allocationId(), command.jobId(), command.nodeId(), now,
                "cannot start: the START came at " + now + ", after its start-by deadline " + command.deadline()
                        + " (issued at " + command.issuedAt() + "); the scheduler may have counted it lost meanwhile",
                command.deadline());
    }
}
