package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.NodeEventType;
import java.util.Objects;
import java.util.Set;

/**
 * Which GPU faults take a host out of service. An XID that means the GPU itself is in trouble, or any
 * uncorrectable ECC error, is critical: {@link Fleet#criticalXid} keeps new work off the host for the
 * quarantine. Any other XID is the workload's own error (a bad kernel, an illegal address): the
 * workload's exit says so, and the host stays in service.
 */
public final class XidPolicy {

    /** The XID an event that names none counts as: a double-bit ECC error. */
    public static final int UNNAMED_XID = 48;

    /** NVIDIA's XIDs that mean the GPU, not the workload, is in trouble (NVIDIA's XID catalog). */
    private static final Set<Integer> CRITICAL = Set.of(
            48, // double-bit ECC error (DBE)
            63, // ECC page retirement or row remapping recorded: the GPU needs a reset
            64, // ECC page retirement or row remapping failed
            74, // NVLink error
            79, // GPU has fallen off the bus
            92, // high single-bit ECC error rate
            94, // contained ECC error
            95, // uncontained ECC error
            119, // GSP RPC timeout
            120); // GSP error

    private XidPolicy() {
    }

    /** A GPU fault as the scheduler judges it: the XID it counts as, and whether it quarantines the host. */
    public record Fault(int xid, boolean critical) {
    }

    /**
     * Judges an {@code XID_ERROR} or {@code ECC_ERROR} event that names {@code xid} (null: none, which
     * counts as {@value #UNNAMED_XID}). An ECC error is always critical, whatever XID it names.
     */
    public static Fault judge(NodeEventType type, Integer xid) {
        Objects.requireNonNull(type, "type");
        if (type != NodeEventType.XID_ERROR && type != NodeEventType.ECC_ERROR) {
            throw new IllegalArgumentException("not a GPU fault: " + type);
        }
        int counted = xid != null ? xid : UNNAMED_XID;
        return new Fault(counted, type == NodeEventType.ECC_ERROR || CRITICAL.contains(counted));
    }
}
