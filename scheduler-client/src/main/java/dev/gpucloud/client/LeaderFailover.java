package dev.gpucloud.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Calls the scheduler at whichever of its instances leads. A standby answers reads itself but turns
 * writes away with UNAVAILABLE and names the leader in the {@code gpucloud-leader} trailer; an
 * instance that is down refuses the connection. Either way the call moves (to the named leader, else
 * to the next address in the list) and is tried again after a short back-off, within a bounded
 * time. No other status is retried. A retried call may already have reached a server, so writes
 * sent through here must be idempotent (SubmitJob carries one client request id for all its tries).
 */
public final class LeaderFailover implements AutoCloseable {

    /** The trailer in which a standby names the leader's gRPC address, "host:port"; absent while none is known. */
    public static final Metadata.Key<String> LEADER_TRAILER =
            Metadata.Key.of("gpucloud-leader", Metadata.ASCII_STRING_MARSHALLER);
    /** How long one call (or one break of a stream) may spend moving between instances before it gives up. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    static final Duration FIRST_BACKOFF = Duration.ofMillis(200);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

    /** Time as the retry loop sees it: the system's, or a test's that only pretends to sleep. */
    public interface Clock {
        long nanoTime();

        void sleep(Duration duration) throws InterruptedException;

        static Clock system() {
            return new Clock() {
                @Override
                public long nanoTime() {
                    return System.nanoTime();
                }

                @Override
                public void sleep(Duration duration) throws InterruptedException {
                    Thread.sleep(duration.toMillis());
                }
            };
        }
    }

    private final List<String> addresses;
    private final Duration timeout;
    private final Consumer<String> notices;
    private final Function<String, ManagedChannel> open;
    private final Clock clock;
    private final Map<String, ManagedChannel> channels = new LinkedHashMap<>();
    private String current;

    /** Plaintext channels on the system clock; {@code notices} gets one line each time a call moves. */
    public LeaderFailover(List<String> addresses, Duration timeout, Consumer<String> notices) {
        this(addresses, timeout, notices, a -> ManagedChannelBuilder.forTarget(a).usePlaintext().build(), Clock.system());
    }

    public LeaderFailover(List<String> addresses, Duration timeout, Consumer<String> notices,
            Function<String, ManagedChannel> open, Clock clock) {
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("no scheduler address");
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("failover timeout must not be negative, was " + timeout);
        }
        this.addresses = List.copyOf(addresses);
        this.timeout = timeout;
        this.notices = notices;
        this.open = open;
        this.clock = clock;
        this.current = this.addresses.get(0);
    }

    /** "host:port,host:port" as a list, blanks dropped, each address once, in the order given. */
    public static List<String> parseAddresses(String commaSeparated) {
        Set<String> seen = new LinkedHashSet<>();
        for (String part : commaSeparated.split(",")) {
            if (!part.isBlank()) {
                seen.add(part.strip());
            }
        }
        if (seen.isEmpty()) {
            throw new IllegalArgumentException("no scheduler address in '" + commaSeparated + "'");
        }
        return List.copyOf(seen);
    }

    /** The leader's address that a standby put in its trailers, if it knew one. */
    public static Optional<String> leaderIn(Throwable failure) {
        Metadata trailers = Status.trailersFromThrowable(failure);
        String leader = trailers == null ? null : trailers.get(LEADER_TRAILER);
        return leader == null || leader.isBlank() ? Optional.empty() : Optional.of(leader.strip());
    }

    /** Why no connection could be made ("connection refused", "unknown host"), or empty when one was. */
    public static Optional<String> unreachable(Status status) {
        for (Throwable t = status.getCause(); t != null; t = t.getCause()) {
            if (t instanceof ConnectException) {
                return Optional.of("connection refused");
            }
            if (t instanceof UnknownHostException) {
                return Optional.of("unknown host");
            }
        }
        return Optional.empty();
    }

    /** The wait before the {@code retry}-th waited retry (0-based): 200 ms, doubling, at most 2 s. */
    public static Duration backoff(int retry) {
        long millis = FIRST_BACKOFF.toMillis() << Math.min(retry, 10);
        return Duration.ofMillis(Math.min(millis, MAX_BACKOFF.toMillis()));
    }

    /** The address after {@code address} in the list, round; the first one for an address not in it. */
    public static String nextAfter(List<String> addresses, String address) {
        int i = addresses.indexOf(address);
        return addresses.get((i + 1) % addresses.size());
    }

    /** The line a person reads when a call moves: "scheduler-1 is a standby; retrying at the leader host:8081". */
    public static String notice(String from, Status status, String to, boolean toNamedLeader) {
        String clause = firstClause(status.getDescription());
        String why = unreachable(status).map(reason -> from + ": " + reason)
                .orElse(clause.isEmpty() ? from + " is unavailable" : toNamedLeader ? clause : from + ": " + clause);
        return why + "; retrying at " + (toNamedLeader ? "the leader " : "") + to;
    }

    private static String firstClause(String description) {
        if (description == null) {
            return "";
        }
        String line = description.lines().findFirst().orElse("").strip();
        int semicolon = line.indexOf(';');
        return semicolon < 0 ? line : line.substring(0, semicolon).strip();
    }

    /** The addresses this client was given, in order. */
    public List<String> addresses() {
        return addresses;
    }

    /** Where the next call goes first: the last instance that took a call, or was named as the leader. */
    public String current() {
        return current;
    }

    /** Runs {@code rpc} on a channel to the current instance, moving and retrying it as the class says. */
    public <T> T call(Function<ManagedChannel, T> rpc) {
        Attempts attempts = attempts();
        while (true) {
            try {
                return rpc.apply(attempts.channel());
            } catch (StatusRuntimeException e) {
                attempts.failed(e);
            }
        }
    }

    /** A fresh budget of tries, for a caller that runs its own loop (a stream that it re-opens). */
    public Attempts attempts() {
        return new Attempts();
    }

    @Override
    public void close() {
        for (ManagedChannel channel : channels.values()) {
            channel.shutdownNow();
        }
        for (ManagedChannel channel : channels.values()) {
            try {
                channel.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * The tries of one call: each failure either moves the call (and returns, after any back-off) or
     * ends it by throwing. Every address refusing the connection in a row ends it at once: nothing
     * runs there to fail over to.
     */
    public final class Attempts {
        private long started = clock.nanoTime();
        private int waited;
        private final Set<String> tried = new HashSet<>(Set.of(current));
        private final Set<String> refused = new HashSet<>();

        private Attempts() {
        }

        /** A channel to the instance to try now, which reconnects at once if an earlier connect failed. */
        public ManagedChannel channel() {
            ManagedChannel channel = channels.computeIfAbsent(current, open);
            channel.resetConnectBackoff();
            return channel;
        }

        /** The call got an answer (a stream's event): a later break starts with the whole budget again. */
        public void progressed() {
            started = clock.nanoTime();
            waited = 0;
            refused.clear();
        }

        /**
         * Moves after a failure and returns when it is time to try again; throws {@code failure} itself
         * when its status is not UNAVAILABLE, and {@link SchedulerUnavailableException} when every
         * address refused or the time is up.
         */
        public void failed(StatusRuntimeException failure) {
            Status status = failure.getStatus();
            if (status.getCode() != Status.Code.UNAVAILABLE) {
                throw failure;
            }
            String from = current;
            Duration spent = Duration.ofNanos(clock.nanoTime() - started);
            if (unreachable(status).isPresent()) {
                refused.add(from);
                if (refused.containsAll(addresses)) {
                    throw new SchedulerUnavailableException(addresses, from, status, true, spent);
                }
            } else {
                refused.clear();
            }
            Optional<String> leader = leaderIn(failure).filter(a -> !a.equals(from));
            String to = leader.orElseGet(() -> nextAfter(addresses, from));
            // a leader named for the first time is tried at once; anything else waits its turn
            Duration wait = leader.isPresent() && !tried.contains(to) ? Duration.ZERO : backoff(waited++);
            if (spent.plus(wait).compareTo(timeout) > 0) {
                throw new SchedulerUnavailableException(addresses, from, status, false, spent);
            }
            notices.accept(notice(from, status, to, leader.isPresent()));
            try {
                clock.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription("interrupted while waiting to retry at " + to)
                        .withCause(e).asRuntimeException();
            }
            current = to;
            tried.add(to);
        }
    }
}
