package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a closed month still owes: the month's invoice as the stored usage prices it now, minus what was
 * billed for it already (its frozen lines and every adjustment for it frozen on later invoices), line by
 * line. Usage that arrived after the month closed, or held usage the catalog has priced since, shows up
 * here and nowhere else; a month billed exactly gives no lines.
 */
public final class Adjustments {

    private Adjustments() {
    }

    private record Key(String jobId, String sku, CapacityType capacityType, long rate, Instant rateFrom) {
    }

    private static final Comparator<Key> ORDER = Comparator.comparing(Key::jobId).thenComparing(Key::sku)
            .thenComparing(Key::capacityType).thenComparing(Key::rate)
            .thenComparing(Key::rateFrom, Comparator.nullsFirst(Comparator.naturalOrder()));

    /**
     * The adjustment lines for {@code forMonth}: {@code now} (its lines priced today) minus {@code billed}
     * (its frozen lines) minus {@code adjusted} (its adjustments already frozen on later invoices).
     */
    public static List<AdjustmentLine> between(YearMonth forMonth, String reason, List<InvoiceLine> now,
            List<InvoiceLine> billed, List<AdjustmentLine> adjusted) {
        Map<Key, long[]> delta = new TreeMap<>(ORDER);
        Map<Key, String> flags = new TreeMap<>(ORDER);
        for (InvoiceLine line : now) {
            Key key = key(line);
            add(delta, key, line.seconds(), line.amountMicros());
            if (line.flag() != null) {
                flags.put(key, line.flag());
            }
        }
        for (InvoiceLine line : billed) {
            Key key = key(line);
            add(delta, key, -line.seconds(), -line.amountMicros());
            if (line.flag() != null) {
                flags.putIfAbsent(key, line.flag());
            }
        }
        for (AdjustmentLine line : adjusted) {
            if (!line.forMonth().equals(forMonth)) {
                throw new IllegalArgumentException("adjustment for " + line.forMonth() + " cannot settle " + forMonth);
            }
            Key key = new Key(line.jobId(), line.sku(), line.capacityType(), line.rateMicrosPerHour(), line.rateFrom());
            add(delta, key, -line.seconds(), -line.amountMicros());
        }
        List<AdjustmentLine> lines = new ArrayList<>();
        delta.forEach((key, figures) -> {
            if (figures[0] != 0 || figures[1] != 0) {
                lines.add(new AdjustmentLine(forMonth, reason, key.jobId(), key.sku(), key.capacityType(), figures[0],
                        key.rate(), figures[1], flags.get(key), key.rateFrom()));
            }
        });
        return List.copyOf(lines);
    }

    private static Key key(InvoiceLine line) {
        return new Key(line.jobId(), line.sku(), line.capacityType(), line.rateMicrosPerHour(), line.rateFrom());
    }

    private static void add(Map<Key, long[]> delta, Key key, long seconds, long amount) {
        long[] figures = delta.computeIfAbsent(key, ignored -> new long[2]);
        figures[0] = Math.addExact(figures[0], seconds);
        figures[1] = Math.addExact(figures[1], amount);
    }

    /** The sum of the lines' amounts in micro-USD (negative for a net credit). */
    public static long totalMicros(List<AdjustmentLine> lines) {
        long total = 0;
        for (AdjustmentLine line : lines) {
            total = Math.addExact(total, line.amountMicros());
        }
        return total;
    }
}
