package dev.gpucloud.scheduler.service.leader;

/**
 * A write asked of a scheduler instance that does not lead (a standby, or a leader deposed meanwhile).
 * gRPC answers it with UNAVAILABLE and the leader's address in the {@code gpucloud-leader} trailer, so a
 * client retries there.
 */
public class NotLeaderException extends RuntimeException {

    private final String leaderAddress;

    public NotLeaderException(String message, String leaderAddress) {
        super(message);
        this.leaderAddress = leaderAddress;
    }

    /** The leader's gRPC address (host:port), or null when no leader is known (a failover in progress). */
    public String leaderAddress() {
        return leaderAddress;
    }
}
