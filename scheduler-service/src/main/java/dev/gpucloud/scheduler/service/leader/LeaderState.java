package dev.gpucloud.scheduler.service.leader;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Whether this scheduler instance leads, under which epoch, and who leads otherwise: what the engine,
 * the outbox and the gRPC services ask before they write. {@link Leadership} keeps it up to date; a write
 * the database refuses as fenced ({@link #fenced}) deposes this instance at once.
 */
@ApplicationScoped
public class LeaderState {

    /** The leader as last read from the lease row: its instance name, gRPC address, epoch and lease. */
    public record Leader(String instance, String address, long epoch, Instant leaseUntil) {
    }

    private final String instance;
    private final String address;
    /** This instance's epoch while it leads; 0 while it does not. */
    private volatile long epoch;
    /** True once this instance's takeover has finished under its current epoch: it serves writes. */
    private volatile boolean serving;
    private final AtomicReference<Leader> known = new AtomicReference<>();
    private volatile Consumer<String> onFenced = reason -> { };

    public LeaderState(SchedulerConfig config, @ConfigProperty(name = "quarkus.http.port", defaultValue = "8081") int port) {
        this.instance = config.instanceId();
        this.address = config.advertisedAddress().orElse("localhost:" + port);
    }

    public String instance() {
        return instance;
    }

    /** The gRPC address other processes reach this instance at. */
    public String address() {
        return address;
    }

    public boolean leads() {
        return epoch > 0;
    }

    /** This instance's epoch while it leads, 0 otherwise. */
    public long epoch() {
        return epoch;
    }

    /** The leader as last read (this instance, while it leads), or null when none is known. */
    public Leader leader() {
        return known.get();
    }

    void elected(long newEpoch, Instant leaseUntil) {
        known.set(new Leader(instance, address, newEpoch, leaseUntil));
        if (epoch != newEpoch) {
            serving = false;
        }
        epoch = newEpoch;
    }

    /** The takeover under {@code takenEpoch} has finished (memory rebuilt, inputs started). */
    void tookOver(long takenEpoch) {
        if (epoch == takenEpoch) {
            serving = true;
        }
    }

    /**
     * Whether this instance is of use to a client now: a leader whose takeover has finished, or a standby that
     * knows a leader whose lease runs (it answers reads and names the leader to writers). Neither while this
     * instance takes over, nor while no one holds the lease.
     */
    public boolean ready() {
        if (leads()) {
            return serving;
        }
        Leader l = known.get();
        return l != null && !l.instance().equals(instance) && l.leaseUntil() != null
                && l.leaseUntil().isAfter(Instant.now());
    }

    void deposed() {
        serving = false;
        epoch = 0;
        known.updateAndGet(l -> l != null && l.instance().equals(instance) ? null : l); // no longer this one
    }

    void observed(Leader leader) {
        known.set(leader);
    }

    void onFenced(Consumer<String> listener) {
        this.onFenced = listener;
    }

    /**
     * The database refused a write of this instance's epoch: another instance leads now. Deposes this one
     * and returns the error to answer the write with.
     */
    public NotLeaderException fenced(String reason) {
        if (epoch > 0) {
            deposed();
            onFenced.accept(reason);
        }
        return notLeader();
    }

    /** Throws {@link NotLeaderException} unless this instance leads. */
    public void requireLeader() {
        if (!leads()) {
            throw notLeader();
        }
    }

    /** The error a standby answers a write with: who leads, and where. */
    public NotLeaderException notLeader() {
        Leader l = known.get();
        boolean other = l != null && !l.instance().equals(instance) && l.leaseUntil() != null
                && l.leaseUntil().isAfter(Instant.now());
        if (!other) {
            return new NotLeaderException(instance + " is a standby and no leader holds the lease now (a failover is"
                    + " under way); retry in a few seconds", null);
        }
        return new NotLeaderException(instance + " is a standby; the leader is " + l.instance() + " at " + l.address()
                + " (epoch " + l.epoch() + ")", l.address());
    }
}
