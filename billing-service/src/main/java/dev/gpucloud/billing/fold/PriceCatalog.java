package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.geometry.MigFamily;
import dev.gpucloud.geometry.NvidiaMigTable;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Prices in micro-USD per GPU-hour by (GPU model, capacity type), each effective from an instant (UTC): the
 * price of a second is the entry in force at that second, so a price change applies only to usage after it.
 * A SKU costs its share of its GPU's price. A SKU the catalog cannot price exactly is never priced silently:
 * at the model's on-demand price, flagged, when only its capacity type is missing; <em>held</em> (rate 0,
 * flagged with the reason) when the model has no price in force at all, so it is billed once the catalog
 * knows it, never dropped and never guessed. Immutable; the {@code with...} methods return a changed copy.
 */
public final class PriceCatalog {

    /** Compute slices of an A100 or H100, which MIG splits into up to seven instances. */
    public static final int DEFAULT_MIG_SLICES = 7;

    /** Where a price given without an effective date takes effect: a fixed instant before any billed usage. */
    public static final Instant UNDATED_EFFECTIVE_FROM = Instant.parse("2020-01-01T00:00:00Z");

    private final Map<String, Map<CapacityType, NavigableMap<Instant, Long>>> prices;
    private final Map<String, Integer> migSlices;

    private PriceCatalog(Map<String, Map<CapacityType, NavigableMap<Instant, Long>>> prices,
            Map<String, Integer> migSlices) {
        this.prices = prices;
        this.migSlices = migSlices;
    }

    /** A catalog that prices nothing: every SKU is held until a price arrives. */
    public static PriceCatalog empty() {
        return new PriceCatalog(Map.of(), Map.of());
    }

    /**
     * AWS EC2 us-east-1 Linux prices per GPU-hour (sources and dates in docs/billing.md), all effective from
     * {@link #UNDATED_EFFECTIVE_FROM}: p4d.24xlarge $21.96/h for 8 A100-40GB and p5.48xlarge $55.04/h for
     * 8 H100-80GB, both after the June 2025 price cut; g5.xlarge $1.006/h for one A10G; p3.2xlarge for one
     * V100 at $3.06/h on demand, $1.84/h reserved (1 year) and $0.93/h spot.
     */
    public static PriceCatalog awsDefaults() {
        long a100 = MicroUsd.fromUsd("21.96") / 8;
        long h100 = MicroUsd.fromUsd("55.04") / 8;
        return empty()
                .withPrice(GpuModels.A100_SXM4_40GB, CapacityType.ON_DEMAND, a100)
                .withMigSlices(GpuModels.A100_SXM4_40GB, DEFAULT_MIG_SLICES)
                .withPrice(GpuModels.H100_SXM5_80GB, CapacityType.ON_DEMAND, h100)
                .withMigSlices(GpuModels.H100_SXM5_80GB, DEFAULT_MIG_SLICES)
                .withPrice(GpuModels.A10G, CapacityType.ON_DEMAND, MicroUsd.fromUsd("1.006"))
                .withMigSlices(GpuModels.A10G, 0)
                .withPrice(GpuModels.V100_SXM2_16GB, CapacityType.ON_DEMAND, MicroUsd.fromUsd("3.06"))
                .withPrice(GpuModels.V100_SXM2_16GB, CapacityType.RESERVED, MicroUsd.fromUsd("1.84"))
                .withPrice(GpuModels.V100_SXM2_16GB, CapacityType.SPOT, MicroUsd.fromUsd("0.93"))
                .withMigSlices(GpuModels.V100_SXM2_16GB, 0);
    }

    /** This catalog with one price (micro-USD per whole-GPU-hour) effective from {@link #UNDATED_EFFECTIVE_FROM}. */
    public PriceCatalog withPrice(String gpuModel, CapacityType capacityType, long microsPerGpuHour) {
        return withPrice(gpuModel, capacityType, UNDATED_EFFECTIVE_FROM, microsPerGpuHour);
    }

    /**
     * This catalog with one price (micro-USD per whole-GPU-hour) in force from {@code effectiveFrom} until the
     * next entry of the same model and capacity type; an entry at the same instant is replaced.
     */
    public PriceCatalog withPrice(String gpuModel, CapacityType capacityType, Instant effectiveFrom,
            long microsPerGpuHour) {
        requireModel(gpuModel);
        if (capacityType == null) {
            throw new IllegalArgumentException("capacity type of a price for '" + gpuModel + "' is missing");
        }
        if (effectiveFrom == null) {
            throw new IllegalArgumentException("effective date of a price for '" + gpuModel + "' is missing");
        }
        if (microsPerGpuHour < 0) {
            throw new IllegalArgumentException("price of " + gpuModel + "/" + capacityType + " must be >= 0, was "
                    + microsPerGpuHour);
        }
        Map<String, Map<CapacityType, NavigableMap<Instant, Long>>> copy = new TreeMap<>(prices);
        Map<CapacityType, NavigableMap<Instant, Long>> byType = new EnumMap<>(CapacityType.class);
        byType.putAll(copy.getOrDefault(gpuModel, Map.of()));
        NavigableMap<Instant, Long> history =
                new TreeMap<>(byType.getOrDefault(capacityType, Collections.emptyNavigableMap()));
        history.put(effectiveFrom, microsPerGpuHour);
        byType.put(capacityType, Collections.unmodifiableNavigableMap(history));
        copy.put(gpuModel, Collections.unmodifiableMap(byType));
        return new PriceCatalog(Collections.unmodifiableMap(copy), migSlices);
    }

    /** This catalog with the number of MIG compute slices of a GPU model set; 0 means the model has no MIG. */
    public PriceCatalog withMigSlices(String gpuModel, int slices) {
        requireModel(gpuModel);
        if (slices < 0 || slices > 64) {
            throw new IllegalArgumentException("mig-slices of " + gpuModel + " must be within 0..64, was " + slices);
        }
        Map<String, Integer> copy = new TreeMap<>(migSlices);
        copy.put(gpuModel, slices);
        return new PriceCatalog(prices, Map.copyOf(copy));
    }

    /**
     * This catalog with entries applied, one per line or comma-separated: {@code MODEL/CAPACITY=MICROS}
     * sets a price in micro-USD per GPU-hour (CAPACITY is ON_DEMAND, SPOT or RESERVED) effective from
     * {@link #UNDATED_EFFECTIVE_FROM}, {@code MODEL/CAPACITY@WHEN=MICROS} one effective from WHEN (a UTC
     * date such as {@code 2025-07-01}, meaning its midnight, or an instant such as
     * {@code 2025-07-01T12:00:00Z}), and {@code MODEL/mig-slices=N} a model's MIG slice count. # starts a
     * comment that runs to the end of its line (commas included); anything else is an error that quotes the
     * entry.
     */
    public PriceCatalog withEntries(String entries) {
        PriceCatalog catalog = this;
        for (String line : entries.split("\\R")) {
            int comment = line.indexOf('#');
            for (String raw : (comment < 0 ? line : line.substring(0, comment)).split(",")) {
                String entry = raw.strip();
                if (!entry.isEmpty()) {
                    catalog = catalog.withEntry(entry);
                }
            }
        }
        return catalog;
    }

    private PriceCatalog withEntry(String entry) {
        int equals = entry.indexOf('=');
        int slash = equals < 0 ? -1 : entry.lastIndexOf('/', equals);
        if (equals < 0 || slash <= 0) {
            throw new IllegalArgumentException("catalog entry '" + entry + "' is not MODEL/CAPACITY=MICROS");
        }
        String model = entry.substring(0, slash).strip();
        String what = entry.substring(slash + 1, equals).strip();
        Instant effectiveFrom = UNDATED_EFFECTIVE_FROM;
        int at = what.indexOf('@');
        if (at >= 0) {
            effectiveFrom = effectiveFrom(entry, what.substring(at + 1).strip());
            what = what.substring(0, at).strip();
        }
        String value = entry.substring(equals + 1).strip();
        long number;
        try {
            number = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("catalog entry '" + entry + "': '" + value + "' is not a whole number");
        }
        if (what.equalsIgnoreCase("mig-slices")) {
            if (at >= 0) {
                throw new IllegalArgumentException("catalog entry '" + entry + "': mig-slices cannot have an "
                        + "effective date");
            }
            return withMigSlices(model, Math.toIntExact(number));
        }
        CapacityType type;
        try {
            type = CapacityType.valueOf(what.toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("catalog entry '" + entry + "': capacity type '" + what
                    + "' is not one of ON_DEMAND, SPOT, RESERVED (or mig-slices)");
        }
        return withPrice(model, type, effectiveFrom, number);
    }

    private static Instant effectiveFrom(String entry, String when) {
        try {
            return when.length() == 10 ? LocalDate.parse(when).atStartOfDay().toInstant(ZoneOffset.UTC)
                    : Instant.parse(when);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("catalog entry '" + entry + "': effective date '" + when
                    + "' is not a UTC date (2025-07-01) or instant (2025-07-01T12:00:00Z)");
        }
    }

    /** The price of one SKU-hour of {@code sku} bought as {@code capacityType} under the latest entries. */
    public SkuRate rate(Sku sku, CapacityType capacityType) {
        return rate(sku, capacityType, Instant.MAX);
    }

    /**
     * The price of one SKU-hour of {@code sku} bought as {@code capacityType} at {@code at}; flagged where not
     * exact, {@linkplain SkuRate#isHeld() held} where the model has no price in force at {@code at}.
     */
    public SkuRate rate(Sku sku, CapacityType capacityType, Instant at) {
        List<String> flags = new ArrayList<>();
        Map<CapacityType, NavigableMap<Instant, Long>> byType = prices.get(sku.gpuModel());
        long gpuHour;
        if (byType == null) {
            return SkuRate.held("GPU model '" + sku.gpuModel() + "' is not in the price catalog");
        }
        Long exact = inForce(byType.get(capacityType), at);
        Long onDemand = inForce(byType.get(CapacityType.ON_DEMAND), at);
        if (exact != null) {
            gpuHour = exact;
        } else if (onDemand != null) {
            gpuHour = onDemand;
            flags.add("no " + capacityType + " price for " + sku.gpuModel()
                    + (byType.containsKey(capacityType) ? " in force yet" : "") + ": billed at its ON_DEMAND rate");
        } else {
            return SkuRate.held("no " + capacityType + " or ON_DEMAND price for " + sku.gpuModel() + " in force at "
                    + at);
        }
        // a configured slice count wins; else gpu-geometry's family of the model (an A30 has 4), else 7
        Optional<MigFamily> family = sku.migProfile() == null ? Optional.empty()
                : NvidiaMigTable.forModelName(sku.gpuModel());
        int slices = migSlices.getOrDefault(sku.gpuModel(),
                family.map(MigFamily::computeSlices).orElse(DEFAULT_MIG_SLICES));
        Optional<SkuShare> share = SkuShare.of(sku, slices);
        if (share.isEmpty()) {
            flags.add("MIG profile '" + sku.migProfile() + "' does not fit " + sku.gpuModel() + " (" + slices
                    + " MIG slices): billed as a whole GPU");
        } else if (family.isPresent() && family.get().profile(sku.migProfile()).isEmpty()) {
            flags.add("MIG profile '" + sku.migProfile() + "' is not one of the " + family.get().name()
                    + " profiles: billed by its compute slices");
        }
        long rate = MicroUsd.scale(gpuHour, share.orElse(SkuShare.WHOLE));
        return flags.isEmpty() ? SkuRate.priced(rate) : SkuRate.flagged(rate, String.join("; ", flags));
    }

    /**
     * {@code window} cut where the rate of {@code sku} bought as {@code capacityType} changes, oldest first:
     * one period per rate in force, neighbours with the same rate merged. Together they cover the window.
     */
    public List<PricePeriod> periods(Sku sku, CapacityType capacityType, Interval window) {
        TreeSet<Instant> cuts = new TreeSet<>();
        Map<CapacityType, NavigableMap<Instant, Long>> byType = prices.getOrDefault(sku.gpuModel(), Map.of());
        for (CapacityType type : List.of(capacityType, CapacityType.ON_DEMAND)) {
            NavigableMap<Instant, Long> history = byType.get(type);
            if (history != null) {
                cuts.addAll(history.subMap(window.from(), false, window.to(), false).keySet());
            }
        }
        List<PricePeriod> periods = new ArrayList<>();
        Instant from = window.from();
        cuts.add(window.to());
        for (Instant to : cuts) {
            SkuRate rate = rate(sku, capacityType, from);
            int last = periods.size() - 1;
            if (last >= 0 && periods.get(last).rate().equals(rate)) {
                periods.set(last, new PricePeriod(Interval.of(periods.get(last).span().from(), to), rate));
            } else {
                periods.add(new PricePeriod(Interval.of(from, to), rate));
            }
            from = to;
        }
        return List.copyOf(periods);
    }

    /** The latest listed price of a whole GPU-hour, if the catalog has this exact one. */
    public Optional<Long> gpuHourPrice(String gpuModel, CapacityType capacityType) {
        return Optional.ofNullable(inForce(prices.getOrDefault(gpuModel, Map.of()).get(capacityType), Instant.MAX));
    }

    /** The number of price entries: one per (model, capacity type, effective date). */
    public int size() {
        return prices.values().stream().flatMap(byType -> byType.values().stream()).mapToInt(Map::size).sum();
    }

    /** Whether the catalog lists any price, of any capacity type and date, for {@code gpuModel}. */
    public boolean knowsModel(String gpuModel) {
        return prices.containsKey(gpuModel);
    }

    /** Every price entry, as {@code MODEL/CAPACITY@INSTANT=MICROS} records, by model, capacity type and date. */
    public List<PriceEntry> entries() {
        List<PriceEntry> entries = new ArrayList<>();
        prices.forEach((model, byType) -> byType.forEach((type, history) -> history.forEach(
                (from, micros) -> entries.add(new PriceEntry(model, type, from, micros)))));
        return List.copyOf(entries);
    }

    /** The MIG slice counts set, by model. */
    public Map<String, Integer> migSlices() {
        return migSlices;
    }

    private static Long inForce(NavigableMap<Instant, Long> history, Instant at) {
        if (history == null) {
            return null;
        }
        Map.Entry<Instant, Long> entry = history.floorEntry(at);
        return entry == null ? null : entry.getValue();
    }

    private static void requireModel(String gpuModel) {
        if (gpuModel == null || gpuModel.isBlank()) {
            throw new IllegalArgumentException("GPU model of a catalog entry must not be blank");
        }
    }

    @Override
    public String toString() {
        return "PriceCatalog" + new TreeMap<>(prices);
    }
}
