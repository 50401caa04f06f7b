package dev.gpucloud.geometry;

import java.util.Optional;

/**
 * One MIG instance's place on its GPU, written {@code <profile>@<start>} ({@code 3g.40gb@4}): the
 * scheduler names the slot it chose and the agent runs the work on the instance of that profile at
 * that memory slice, creating it where the GPU allows.
 */
public record MigSlot(String profile, int start) {

    /** The highest memory slice any MIG GPU has. */
    public static final int MAX_START = 7;

    public MigSlot {
        MigProfileName.parse(profile);
        if (start < 0 || start > MAX_START) {
            throw new IllegalArgumentException("MIG slot " + profile + "@" + start + ": a start is a memory slice 0.."
                    + MAX_START);
        }
    }

    /** The slot {@code text} names; throws, saying what is wrong, when it is not {@code <profile>@<start>}. */
    public static MigSlot parse(String text) {
        if (text == null || text.indexOf('@') < 0) {
            throw new IllegalArgumentException("MIG slot '" + (text == null ? "" : MigProfileName.clip(text))
                    + "' is not of the form <profile>@<start 0-" + MAX_START + ">, e.g. 3g.40gb@4");
        }
        int at = text.lastIndexOf('@');
        String profile = text.substring(0, at);
        String start = text.substring(at + 1);
        try {
            MigProfileName.parse(profile);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("MIG slot '" + MigProfileName.clip(text) + "': " + e.getMessage(), e);
        }
        if (!start.matches("[0-7]")) {
            throw new IllegalArgumentException("MIG slot '" + MigProfileName.clip(text) + "': the start after '@' must be"
                    + " a memory slice 0-" + MAX_START + ", was '" + MigProfileName.clip(start) + "'");
        }
        return new MigSlot(profile, Integer.parseInt(start));
    }

    /** The slot {@code text} names, or empty when it is none (a MIG UUID, null, or a malformed slot). */
    public static Optional<MigSlot> tryParse(String text) {
        if (text == null || text.indexOf('@') < 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(parse(text));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** Whether {@code text} is meant as a slot (it has an '@'), as opposed to a MIG instance UUID. */
    public static boolean looksLikeSlot(String text) {
        return text != null && text.indexOf('@') >= 0;
    }

    @Override
    public String toString() {
        return profile + "@" + start;
    }
}
