package dev.gpucloud.contracts.events;

import java.time.Instant;

/** Something that happened to a host, on {@code node.events} keyed by nodeId. */
public record NodeEvent(
        String nodeId,
        NodeEventType type,
        Instant occurredAt,
        Instant deadline,
        Integer gpuIndex,
        Integer xid,
        String detail) {

    public NodeEvent {
        Require.text(nodeId, "nodeId");
        Require.present(type, "type");
        Require.present(occurredAt, "occurredAt");
        if (type == NodeEventType.SPOT_INTERRUPTION) {
            Require.present(deadline, "deadline");
        }
        if (type == NodeEventType.XID_ERROR) {
            Require.present(xid, "xid");
        }
    }
}
