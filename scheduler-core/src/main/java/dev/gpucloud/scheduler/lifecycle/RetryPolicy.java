package dev.gpucloud.scheduler.lifecycle;

import java.util.Set;

/**
 * Which failed exits are retried, and how often. Exit codes that mean the command itself is wrong
 * (2: misuse, 126: not executable, 127: not found) are never retried; any other non-zero exit is
 * retried up to {@code maxRetries} times, resuming from the latest checkpoint.
 */
public record RetryPolicy(int maxRetries, Set<Integer> neverRetry) {

    public static final RetryPolicy DEFAULT = new RetryPolicy(3, Set.of(2, 126, 127));

    public RetryPolicy {
        if (maxRetries < 0) {
            throw new IllegalArgumentException("maxRetries must be >= 0");
        }
        neverRetry = Set.copyOf(neverRetry);
    }

    public boolean retries(int exitCode, int failuresSoFar) {
        return exitCode != 0 && !neverRetry.contains(exitCode) && failuresSoFar < maxRetries;
    }
}
