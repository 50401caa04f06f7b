package dev.gpucloud.contracts.logging;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jboss.logging.MDC;

/**
 * The fields a log line carries beside its message, so that one job's or one host's lines can be found across the
 * services' logs by a query rather than by grepping five files (docs/operations.md, "Logs"): with JSON logs on, each
 * field set here is a key of the line's {@code mdc} object.
 *
 * <pre>{@code
 * try (LogFields fields = LogFields.of(LogFields.JOB_ID, job.id, LogFields.TENANT, job.tenant)) {
 *     LOG.infof("%s FAILED: %s", job.id, why);
 * }
 * }</pre>
 *
 * <p>Closing puts back what the fields held before, so a nested scope (a job's line inside a host's) leaves the
 * outer one as it was. The fields live in JBoss Logging's MDC, which Quarkus keeps per Vert.x context where there is
 * one and per thread elsewhere: set them around the lines they describe, on the thread that logs, and never across
 * an asynchronous step.
 */
public final class LogFields implements AutoCloseable {

    /** A job's id ({@code job-...}). */
    public static final String JOB_ID = "job_id";
    /** The tenant a job or a call belongs to. */
    public static final String TENANT = "tenant";
    /** A GPU host's id. */
    public static final String NODE_ID = "node_id";
    /** One worker's allocation of GPUs on a host. */
    public static final String ALLOCATION_ID = "allocation_id";
    /** The trace the line's work is part of (docs/operations.md, "Traces"): {@code ./gpucloud trace JOB} shows it. */
    public static final String TRACE_ID = "trace_id";

    private final Map<String, Object> before = new LinkedHashMap<>();

    private LogFields(String... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("LogFields.of takes keys and values in pairs, got "
                    + keysAndValues.length + " strings");
        }
        for (int i = 0; i < keysAndValues.length; i += 2) {
            String key = keysAndValues[i];
            String value = keysAndValues[i + 1];
            if (!before.containsKey(key)) {
                before.put(key, MDC.get(key));
            }
            if (value == null || value.isEmpty()) {
                MDC.remove(key); // a field that does not apply is left out, not written empty
            } else {
                MDC.put(key, value);
            }
        }
    }

    /** Sets {@code keysAndValues} (key, value, key, value...) until {@link #close}; a null or empty value unsets. */
    public static LogFields of(String... keysAndValues) {
        return new LogFields(keysAndValues);
    }

    @Override
    public void close() {
        before.forEach((key, value) -> {
            if (value == null) {
                MDC.remove(key);
            } else {
                MDC.put(key, value);
            }
        });
    }
}
