package dev.gpucloud.contracts.limits;

import java.util.Objects;

/**
 * One row of the limits table: what it bounds ({@code appliesTo}: the fields, by their JSON names; the
 * gRPC names are the same in snake case), the kind of bound, its range and why.
 */
public record Limit(String name, String appliesTo, Kind kind, long min, long max, String reason) {

    /** What a limit counts. */
    public enum Kind {
        /** UTF-16 characters of a string; no NUL character, no unpaired surrogate. */
        TEXT("characters"),
        /** Entries of a list. */
        LIST("entries"),
        /** Entries of a map. */
        MAP("entries"),
        /** An integer's value. */
        NUMBER("value"),
        /** Seconds relative to now (negative: in the past), see {@link Limits#EPOCH} for the absolute floor. */
        TIME("seconds from now");

        public final String unit;

        Kind(String unit) {
            this.unit = unit;
        }
    }

    public Limit {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(appliesTo, "appliesTo");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
        if (min > max) {
            throw new IllegalArgumentException("limit " + name + ": min " + min + " > max " + max);
        }
    }
}
