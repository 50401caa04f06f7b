package dev.gpucloud.geometry;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A MIG GPU-instance profile name as NVIDIA writes it, {@code <compute slices>g.<memory>gb}, with
 * {@code +me} when the instance also takes the GPU's media engines: {@code 3g.40gb}, {@code 1g.10gb+me}.
 * The name alone says how many compute slices the instance has; which GPUs offer it is
 * {@link NvidiaMigTable}'s business.
 */
public record MigProfileName(int computeSlices, int memoryGb, boolean mediaExtensions) {

    /** The most compute slices any MIG GPU has (A100, H100, H200: 7). */
    public static final int MAX_COMPUTE_SLICES = 7;

    private static final Pattern NAME = Pattern.compile("([0-9]+)g\\.([0-9]+)gb(\\+me)?");
    private static final String FORM = "<compute slices>g.<memory>gb, optionally +me (e.g. 3g.40gb, 1g.10gb+me)";

    public MigProfileName {
        if (computeSlices < 1 || computeSlices > MAX_COMPUTE_SLICES) {
            throw new IllegalArgumentException("a MIG profile has 1.." + MAX_COMPUTE_SLICES + " compute slices, not "
                    + computeSlices);
        }
        if (memoryGb < 1) {
            throw new IllegalArgumentException("a MIG profile has at least 1 GB of memory, not " + memoryGb);
        }
    }

    /** The profile {@code text} names; throws, saying what is wrong, when it is not a profile name. */
    public static MigProfileName parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("MIG profile name is empty; expected " + FORM);
        }
        Matcher m = NAME.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("MIG profile '" + clip(text) + "' is not of the form " + FORM);
        }
        int compute = digits(m.group(1));
        int memory = digits(m.group(2));
        if (compute < 1 || compute > MAX_COMPUTE_SLICES) {
            throw new IllegalArgumentException("MIG profile '" + text + "' asks for " + m.group(1)
                    + " compute slices; a MIG GPU has 1.." + MAX_COMPUTE_SLICES);
        }
        if (memory < 1) {
            throw new IllegalArgumentException("MIG profile '" + text + "' has no memory (" + m.group(2) + "gb)");
        }
        return new MigProfileName(compute, memory, m.group(3) != null);
    }

    /** The profile {@code text} names, or empty when it is none. */
    public static Optional<MigProfileName> tryParse(String text) {
        try {
            return Optional.of(parse(text));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static int digits(String s) {
        // more digits than any GPU could mean: out of range, without overflowing
        return s.length() > 6 ? Integer.MAX_VALUE : Integer.parseInt(s);
    }

    static String clip(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }

    @Override
    public String toString() {
        return computeSlices + "g." + memoryGb + "gb" + (mediaExtensions ? "+me" : "");
    }
}
