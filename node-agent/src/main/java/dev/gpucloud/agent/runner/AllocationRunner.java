package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.NodeCommand;
import java.util.List;

/**
 * Runs the workloads the scheduler assigns to this agent's hosts and says what became of them. A
 * command never throws for a bad request: a START that cannot run comes back as an EXITED event
 * with a non-zero code and the reason.
 */
public interface AllocationRunner {

    /** True when {@code nodeId} is a host whose commands this agent carries out. */
    boolean owns(String nodeId);

    /** Applies one command; a command for another host or one seen before changes nothing. */
    Reports handle(NodeCommand command);

    /** Brings every allocation up to now: finished runs exit, saves complete, usage is cut. */
    Reports advance();

    /** The allocations running now, oldest first. */
    List<RunningAllocation> running();
}
