package dev.gpucloud.agent.messaging;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.function.Consumer;

/**
 * Refuses node commands from a deposed scheduler leader. Each command carries the epoch of the leader
 * that wrote it; once this agent has seen an epoch, a command of a lower one comes from a leader that
 * has since lost its lease (a paused process resumed, or a producer's late retry), and is refused.
 * Commands of epoch 0 come from a sender outside leader election and are refused once any leader has
 * spoken. The highest epoch is kept in a file (beside the spool) whenever it rises, so a restarted agent
 * refuses a deposed leader's commands from its first one, instead of learning the epoch again from the
 * next leader's command.
 */
public final class EpochFence {

    private final Path file;
    private final Consumer<String> problems;
    private long highest;

    /** A fence that remembers nothing across restarts. */
    public EpochFence() {
        this.file = null;
        this.problems = p -> { };
    }

    /** A fence kept in {@code file}: read now, written whenever the highest epoch rises. */
    public EpochFence(Path file, Consumer<String> problems) {
        this.file = file;
        this.problems = problems;
        this.highest = read(file, problems);
    }

    /** Whether a command of {@code epoch} may run; raises the highest epoch seen when it is newer. */
    public synchronized boolean admit(long epoch) {
        if (epoch < highest) {
            return false;
        }
        if (epoch > highest) {
            highest = epoch;
            write(epoch);
        }
        return true;
    }

    /** The highest leader epoch this agent has seen (0: none yet). */
    public synchronized long highest() {
        return highest;
    }

    private static long read(Path file, Consumer<String> problems) {
        if (!Files.exists(file)) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).trim()));
        } catch (IOException | NumberFormatException e) {
            problems.accept("cannot read the leader epoch kept in " + file + " (" + e.getMessage() + "); starting from"
                    + " none: the next leader's command sets it again");
            return 0;
        }
    }

    private void write(long epoch) {
        if (file == null) {
            return;
        }
        try {
            Files.createDirectories(file.getParent());
            Path next = file.resolveSibling(file.getFileName() + ".next");
            Files.writeString(next, epoch + "\n", StandardCharsets.US_ASCII);
            try {
                Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(next, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            problems.accept("cannot keep the leader epoch " + epoch + " in " + file + " (" + e.getMessage()
                    + "); it holds in memory until a restart");
        }
    }
}
