package dev.gpucloud.testsupport;

import dev.gpucloud.contracts.limits.Limit;
import java.util.Random;

/**
 * Seeded generators of hostile input, derived from the limits table: for each field, values at and just
 * past its bounds, and values no bound should let through (NUL, unpaired surrogates, control characters,
 * SQL and path probes, megabytes). The same seed gives the same inputs, so a failure replays.
 */
public final class Hostile {

    private static final String[] PROBES = {"", " ", "\u0000", "a\u0000b", "\ud800", "x\udc00y", "' OR 1=1 --",
        "'; DROP TABLE jobs; --", "../../etc/passwd", "%00", "${jndi:ldap://x}", "\r\n\r\nX-Injected: 1", "\t\b\f",
        "\u202e\u0301", "null", "-1", "9".repeat(40), "<script>alert(1)</script>", "\ud83d\ude80", "Acme"};

    private final Random random;

    public Hostile(long seed) {
        this.random = new Random(seed);
    }

    /** A string for a field bounded by {@code limit}: a probe, a boundary length, or far past it. */
    public String text(Limit limit) {
        int pick = random.nextInt(10);
        long max = limit.max();
        return switch (pick) {
            case 0, 1, 2 -> PROBES[random.nextInt(PROBES.length)];
            case 3 -> filler((int) Math.min(max, 70_000));
            case 4 -> filler((int) Math.min(max + 1, 70_000));
            case 5 -> filler(random.nextInt(4) == 0 ? 900_000 : (int) Math.min(max * 2 + 1, 200_000));
            case 6 -> filler(1 + random.nextInt(20)) + PROBES[random.nextInt(PROBES.length)];
            case 7 -> valid(Math.max(1, (int) Math.min(max, 12)));
            default -> randomUnicode(1 + random.nextInt(40));
        };
    }

    /** A number for a field bounded by {@code limit}: its bounds, one past them, or extremes. */
    public long number(Limit limit) {
        long[] candidates = {limit.min(), limit.max(), limit.min() - 1, limit.max() + 1, 0, -1, Long.MAX_VALUE,
            Long.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE, (long) Integer.MAX_VALUE + 1};
        return candidates[random.nextInt(candidates.length)];
    }

    /** A copy of {@code bytes} with a few bytes flipped, cut short or extended with garbage. */
    public byte[] mutate(byte[] bytes) {
        byte[] out;
        switch (random.nextInt(4)) {
            case 0 -> out = java.util.Arrays.copyOf(bytes, bytes.length == 0 ? 0 : random.nextInt(bytes.length));
            case 1 -> {
                out = java.util.Arrays.copyOf(bytes, bytes.length + 1 + random.nextInt(16));
                for (int i = bytes.length; i < out.length; i++) {
                    out[i] = (byte) random.nextInt(256);
                }
            }
            default -> {
                out = bytes.clone();
                for (int n = 1 + random.nextInt(4); n > 0 && out.length > 0; n--) {
                    out[random.nextInt(out.length)] = (byte) random.nextInt(256);
                }
            }
        }
        return out;
    }

    /** Random bytes. */
    public byte[] bytes(int max) {
        byte[] out = new byte[random.nextInt(max + 1)];
        random.nextBytes(out);
        return out;
    }

    public int nextInt(int bound) {
        return random.nextInt(bound);
    }

    public boolean nextBoolean() {
        return random.nextBoolean();
    }

    private String filler(int length) {
        return "x".repeat(Math.max(0, length));
    }

    private String valid(int length) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < length; i++) {
            out.append((char) ('a' + random.nextInt(26)));
        }
        return out.toString();
    }

    private String randomUnicode(int length) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < length; i++) {
            out.append((char) random.nextInt(0x10000));
        }
        return out.toString();
    }
}
