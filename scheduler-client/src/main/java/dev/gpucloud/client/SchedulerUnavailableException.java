package dev.gpucloud.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;

/**
 * No scheduler instance took the call: either every address refused the connection (nothing runs
 * there), or instances answered but none led before the failover timeout ran out.
 */
public final class SchedulerUnavailableException extends RuntimeException {

    private final List<String> addresses;
    private final String lastAddress;
    private final transient Status lastStatus;
    private final boolean noneReachable;
    private final Duration spent;

    public SchedulerUnavailableException(List<String> addresses, String lastAddress, Status lastStatus,
            boolean noneReachable, Duration spent) {
        super((noneReachable ? "no scheduler reachable at " : "no scheduler leader took the call at ")
                + String.join(",", addresses) + " (last, from " + lastAddress + ": " + lastStatus + ")",
                lastStatus.asRuntimeException());
        this.addresses = List.copyOf(addresses);
        this.lastAddress = lastAddress;
        this.lastStatus = lastStatus;
        this.noneReachable = noneReachable;
        this.spent = spent;
    }

    /** The addresses that were tried, as given. */
    public List<String> addresses() {
        return addresses;
    }

    /** The address that gave the last answer. */
    public String lastAddress() {
        return lastAddress;
    }

    /** The last answer (UNAVAILABLE), with its description and cause. */
    public Status lastStatus() {
        return lastStatus;
    }

    /** True when every address refused the connection; false when the time ran out. */
    public boolean noneReachable() {
        return noneReachable;
    }

    /** How long the call spent trying. */
    public Duration spent() {
        return spent;
    }
}
