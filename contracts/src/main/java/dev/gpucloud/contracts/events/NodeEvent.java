package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
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
        Check.text(nodeId, Limits.ID, "nodeId");
        Check.optionalText(detail, Limits.DETAIL, "detail");
        if (xid != null) {
            Check.number(xid, Limits.XID, "xid");
        }
        if (gpuIndex != null) {
            Check.number(gpuIndex, Limits.GPU_INDEX, "gpuIndex");
        }
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
