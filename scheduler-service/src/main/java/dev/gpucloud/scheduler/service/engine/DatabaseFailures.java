package dev.gpucloud.scheduler.service.engine;

import io.vertx.pgclient.PgException;

/**
 * Tells a failure of the database (unreachable, timed out, a conflict, shutting down), worth retrying,
 * from a failure of the data (a value refused, a row that cannot be read, a bug it triggers), which is
 * isolated to its job or record; and words a failure for a reason field without SQL or a stack.
 */
public final class DatabaseFailures {

    /** The longest failure text a reason carries. */
    static final int REASON_LIMIT = 300;

    private DatabaseFailures() {
    }

    /**
     * Whether {@code e} is the database's trouble, not the data's: the same work may succeed later. The whole
     * cause chain counts (Hibernate wraps the driver's failures), and so does every failure a composite
     * carries (a transaction that failed and whose rollback failed too, as when the server restarts).
     */
    public static boolean isTransient(Throwable e) {
        return isTransient(e, 0);
    }

    private static boolean isTransient(Throwable e, int depth) {
        if (e == null || depth > 4) {
            return false;
        }
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof io.smallrye.mutiny.CompositeException composite) {
                return composite.getCauses().stream().anyMatch(cause -> isTransient(cause, depth + 1));
            }
            if (c instanceof SerialExecutor.OperationTimeoutException) {
                return true;
            }
            if (c instanceof PgException pg && pg.getSqlState() != null) {
                String state = pg.getSqlState();
                // 08: connection, 40: transaction rollback (deadlock, serialization), 53: resources, 57: operator
                // (57P01: the server shuts down, 57P03: it is starting up)
                return state.startsWith("08") || state.startsWith("40") || state.startsWith("53")
                        || state.startsWith("57");
            }
        }
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof dev.gpucloud.contracts.events.MalformedEventException
                    || c instanceof com.fasterxml.jackson.core.JsonProcessingException) {
                return false; // bad data, though Jackson's failures are IOExceptions
            }
        }
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            // the pool closes while the service shuts down: the next instance must do this work, not a DLQ
            if (String.valueOf(c.getMessage()).contains("Pool closed")
                    || String.valueOf(c.getMessage()).contains("Connection is not active")) {
                return true;
            }
            // a connection the server dropped (a restart) under a statement or a transaction
            if (c instanceof io.vertx.sqlclient.ClosedConnectionException) {
                return true;
            }
            if (c instanceof java.net.ConnectException || c instanceof java.io.IOException
                    || c instanceof io.vertx.core.VertxException && String.valueOf(c.getMessage()).contains("closed")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the database refused a write because another scheduler instance leads now (the fence of
     * migration V5, SQLSTATE GC001): this instance is deposed; the write is not retried.
     */
    public static boolean isFenced(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof PgException pg && "GC001".equals(pg.getSqlState())) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /**
     * A failure as a reason: its kind and first line of message, with any SQL statement Hibernate adds
     * ({@code [insert into ...]}) cut off, clipped to {@link #REASON_LIMIT} characters.
     */
    public static String clip(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root && root.getMessage() == null) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? "" : root.getMessage();
        message = message.replaceAll("(?is) \\[(insert|update|select|delete|with) .*$", "");
        int line = message.indexOf('\n');
        if (line >= 0) {
            message = message.substring(0, line);
        }
        return printable(root.getClass().getSimpleName() + (message.isBlank() ? "" : ": " + message));
    }

    /** {@code text} with control characters (NUL included) replaced and clipped: fit for a reason column. */
    public static String printable(String text) {
        StringBuilder b = new StringBuilder(Math.min(text.length(), REASON_LIMIT + 1));
        for (int i = 0; i < text.length() && b.length() < REASON_LIMIT; i++) {
            char ch = text.charAt(i);
            b.append(Character.isISOControl(ch) ? '?' : ch);
        }
        if (text.length() > REASON_LIMIT) {
            b.append("...");
        }
        return b.toString();
    }
}
