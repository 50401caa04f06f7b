package dev.gpucloud.scheduler.service.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * Stores why queued jobs wait, many rows to a statement. A pass over a queue of thousands can change the reason of
 * every job at once (a host joined or left, a takeover): one update per job would hold the pass's transaction, and
 * with it every submission and placement behind it, for seconds; here it is one statement per {@link #ROWS} jobs.
 * A row that is no longer PENDING (placed, cancelled meanwhile) is left as it is.
 */
final class PendingReasons {

    /** Jobs per statement: a few hundred kilobytes of JSON at most, whatever the queue. */
    static final int ROWS = 2_000;

    private static final String UPDATE = "update jobs set reason = r.reason, updated_at = :at"
            + " from jsonb_to_recordset(cast(cast(:rows as text) as jsonb)) as r(id text, reason text)"
            + " where jobs.id = r.id and jobs.state = 'PENDING'";

    // the rows go as text and are parsed by the database: a parameter PostgreSQL takes for jsonb would be sent
    // by the reactive client as one JSON string, not as the array it holds

    private static final ObjectMapper JSON = new ObjectMapper();

    private PendingReasons() {
    }

    /** Writes each job's reason (job id to reason), in statements of at most {@link #ROWS} rows, one after another. */
    static Uni<Void> write(Mutiny.Session session, Map<String, String> reasons, Instant at) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (String rows : batches(reasons, ROWS)) {
            chain = chain.call(() -> session.createNativeQuery(UPDATE).setParameter("rows", rows)
                    .setParameter("at", at).executeUpdate());
        }
        return chain;
    }

    /**
     * {@code reason} as PostgreSQL can hold it: a NUL or a lone surrogate (from a host's or a job's text) would
     * fail the statement, and with it the pass for every queued job; each becomes '?'. All else is kept.
     */
    static String storable(String reason) {
        StringBuilder b = null;
        for (int i = 0; i < reason.length(); i++) {
            char c = reason.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < reason.length()
                    && Character.isLowSurrogate(reason.charAt(i + 1));
            if (pair) {
                if (b != null) {
                    b.append(c).append(reason.charAt(i + 1));
                }
                i++;
                continue;
            }
            boolean bad = c == '\0' || Character.isSurrogate(c);
            if (bad && b == null) {
                b = new StringBuilder(reason.length()).append(reason, 0, i);
            }
            if (b != null) {
                b.append(bad ? '?' : c);
            }
        }
        return b == null ? reason : b.toString();
    }

    /** The reasons as JSON arrays of {@code {"id", "reason"}} objects, at most {@code size} to an array. */
    static List<String> batches(Map<String, String> reasons, int size) {
        List<String> out = new ArrayList<>();
        ArrayNode batch = JSON.createArrayNode();
        for (Map.Entry<String, String> e : reasons.entrySet()) {
            batch.addObject().put("id", e.getKey()).put("reason", storable(e.getValue()));
            if (batch.size() == size) {
                out.add(batch.toString());
                batch = JSON.createArrayNode();
            }
        }
        if (!batch.isEmpty()) {
            out.add(batch.toString());
        }
        return out;
    }
}
