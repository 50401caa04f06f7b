package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.PriceEntry;
import dev.gpucloud.contracts.events.CapacityType;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The price catalog in force: the configured one (built in, a file, overrides) with the entries operators
 * added over REST applied on top, in the order they were added. Entries live in PostgreSQL
 * ({@code price_entry}), so every instance and every restart prices alike.
 */
@ApplicationScoped
public class CatalogStore {

    private static final String ENTRIES = """
            SELECT gpu_model, capacity_type, effective_from, micros_per_gpu_hour
            FROM price_entry ORDER BY id""";
    private static final String INSERT = """
            INSERT INTO price_entry (gpu_model, capacity_type, effective_from, micros_per_gpu_hour, note)
            VALUES ($1, $2, $3, $4, $5)""";
    /** Closed months that hold usage of a model that was not priced: the new price makes them owe it. */
    private static final String HELD_MONTHS = """
            INSERT INTO late_usage (tenant, month, reason)
            SELECT DISTINCT tenant, for_month, $2 FROM invoice_line
            WHERE kind = 'USAGE' AND split_part(sku, '/', 1) = $1 AND flag LIKE 'held: %'""";

    private final Pool pool;
    private final PriceCatalog configured;

    public CatalogStore(Pool pool, PriceCatalog configured) {
        this.pool = pool;
        this.configured = configured;
    }

    /** The catalog in force now. */
    public Uni<PriceCatalog> current() {
        return current(pool);
    }

    public Uni<PriceCatalog> current(SqlClient client) {
        return added(client).map(entries -> {
            PriceCatalog catalog = configured;
            for (PriceEntry entry : entries) {
                catalog = entry.applyTo(catalog);
            }
            return catalog;
        });
    }

    /** The entries operators added, oldest first. */
    public Uni<List<PriceEntry>> added(SqlClient client) {
        return client.query(ENTRIES).execute().map(rows -> {
            List<PriceEntry> entries = new ArrayList<>();
            for (Row row : rows) {
                entries.add(new PriceEntry(row.getString("gpu_model"), CapacityType.valueOf(row.getString("capacity_type")),
                        row.getOffsetDateTime("effective_from").toInstant(), row.getLong("micros_per_gpu_hour")));
            }
            return entries;
        });
    }

    /**
     * Adds a price. Prices apply from their effective time, and the past is not rewritten: an entry must take
     * effect at or after {@code now}, except the first price of a GPU model the catalog does not know at all,
     * which may be back-dated so that the usage held for lack of it is billed (on open invoices as they are
     * read; for closed months as an adjustment on the next open invoice). Fails with
     * {@link IllegalArgumentException} naming the field at fault.
     */
    public Uni<PriceEntry> add(PriceEntry entry, String note, Instant now) {
        return pool.withTransaction(conn -> conn.query("LOCK TABLE price_entry IN SHARE ROW EXCLUSIVE MODE").execute()
                .flatMap(locked -> current(conn))
                .flatMap(catalog -> {
                    boolean newModel = !catalog.knowsModel(entry.gpuModel());
                    if (entry.effectiveFrom().isBefore(now) && !newModel) {
                        return Uni.createFrom().failure(new IllegalArgumentException("field 'effectiveFrom' must not "
                                + "be in the past (" + entry.effectiveFrom() + " < " + now + ") for "
                                + entry.gpuModel() + ", which the catalog already prices: billed usage is not "
                                + "repriced; only a model the catalog does not know may be back-dated"));
                    }
                    Uni<?> insert = conn.preparedQuery(INSERT).execute(Tuple.of(entry.gpuModel(),
                            entry.capacityType().name(), Timestamps.utc(entry.effectiveFrom()),
                            entry.microsPerGpuHour(), note));
                    if (newModel) {
                        insert = insert.flatMap(done -> conn.preparedQuery(HELD_MONTHS).execute(Tuple.of(
                                entry.gpuModel(), "held usage of " + entry.gpuModel() + " priced by the catalog from "
                                        + entry.effectiveFrom())));
                    }
                    return insert.replaceWith(entry);
                }));
    }
}
