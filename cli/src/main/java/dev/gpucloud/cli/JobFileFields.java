package dev.gpucloud.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import dev.gpucloud.contracts.grpc.v1.DependencyCondition;
import dev.gpucloud.contracts.grpc.v1.JobArray;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The job file's {@code array:} and {@code after:} fields, read token by token so that each mistake names the line
 * and column of the very key or entry it is about (a grid parameter, a count, a dependency), not the mapping's end.
 */
final class JobFileFields {

    private JobFileFields() {
    }

    /** A mistake in one of these fields, at the place it is about; said whole (JobFile#describe clips others). */
    static final class Problem extends JsonMappingException {
        Problem(JsonParser p, String message, JsonLocation at) {
            super(p, message, at);
        }
    }

    /** {@code array: {count: 64}} or {@code array: {grid: {LR: [1e-3, 1e-4], BATCH: [32, 64]}}}, checked. */
    @JsonDeserialize(using = ArrayReader.class)
    record ArrayField(JobArray value) {
    }

    /**
     * One {@code after:} entry: {@code job-…}, or {@code {job: arr-…, on: any}}; {@code at} is where the file has
     * it (a cycle or an unknown name in a DAG file is reported there).
     */
    @JsonDeserialize(using = AfterReader.class)
    record After(String job, DependencyCondition on, JsonLocation at) {
    }

    /** success or any (also after-success, after_any; any case). */
    static DependencyCondition condition(String word) {
        return switch (Choice.word(word)) {
            case "success", "after-success" -> DependencyCondition.AFTER_SUCCESS;
            case "any", "after-any" -> DependencyCondition.AFTER_ANY;
            default -> throw new IllegalArgumentException("'" + JobFile.clip(word) + "' is not one of success, any"
                    + " (success: it must succeed; any: any end will do)");
        };
    }

    static final class ArrayReader extends JsonDeserializer<ArrayField> {
        @Override
        public ArrayField deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            JsonLocation start = p.currentTokenLocation();
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw new Problem(p, "expected a mapping: {count: 16}, or {grid: {LR: [1e-3, 1e-4]}}",
                        start);
            }
            Long count = null;
            Map<String, List<String>> grid = null;
            Map<String, JsonLocation> where = new HashMap<>();
            where.put("", start);
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String field = p.currentName();
                JsonLocation at = p.currentTokenLocation();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "count" -> {
                        where.put("count", at);
                        if (value != JsonToken.VALUE_NUMBER_INT) {
                            throw new Problem(p, "count: '" + JobFile.clip(p.getText())
                                    + "' is not a whole number of elements", at);
                        }
                        BigInteger n = p.getBigIntegerValue();
                        count = n.bitLength() > 62 ? Long.MAX_VALUE : n.longValue();
                    }
                    case "grid" -> {
                        where.put("grid", at);
                        grid = grid(p, where);
                    }
                    default -> throw new Problem(p, "unknown field '" + JobFile.clip(field)
                            + "' in array (fields there: count, grid)", at);
                }
            }
            try {
                return new ArrayField(JobArrays.of(count, grid));
            } catch (JobArrays.Refused e) {
                throw new Problem(p, e.getMessage(), where.getOrDefault(e.at, start));
            }
        }

        /** The parameters in the file's order, each value as the file writes it (1e-3 stays "1e-3"). */
        private static Map<String, List<String>> grid(JsonParser p, Map<String, JsonLocation> where)
                throws IOException {
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw new Problem(p, "grid: a mapping of NAME: [values], e.g. {LR: [1e-3, 1e-4]}",
                        p.currentTokenLocation());
            }
            Map<String, List<String>> grid = new LinkedHashMap<>();
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String name = p.currentName();
                JsonLocation at = p.currentTokenLocation();
                where.put(name, at);
                if (p.nextToken() != JsonToken.START_ARRAY) {
                    throw new Problem(p, "grid." + JobFile.clip(name) + ": a list of values, e.g. ["
                            + "1e-3, 1e-4]", at);
                }
                List<String> values = new ArrayList<>();
                for (JsonToken v = p.nextToken(); v != JsonToken.END_ARRAY; v = p.nextToken()) {
                    if (!v.isScalarValue() || v == JsonToken.VALUE_NULL) {
                        throw new Problem(p, "grid." + JobFile.clip(name) + ": each value is a"
                                + " string or a number, one is " + (v == JsonToken.VALUE_NULL ? "empty" : "a "
                                + (v == JsonToken.START_ARRAY ? "list" : "mapping")), p.currentTokenLocation());
                    }
                    values.add(p.getText());
                }
                grid.put(name, values);
            }
            return grid;
        }
    }

    static final class AfterReader extends JsonDeserializer<After> {
        @Override
        public After deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            JsonLocation start = p.currentTokenLocation();
            if (p.currentToken() == JsonToken.VALUE_STRING) {
                return new After(job(p, p.getText(), start), DependencyCondition.AFTER_SUCCESS, start);
            }
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw new Problem(p, "each entry is a job's id (job-…, arr-…), or {job: ID, on:"
                        + " success|any}", start);
            }
            String job = null;
            DependencyCondition on = DependencyCondition.AFTER_SUCCESS;
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String field = p.currentName();
                JsonLocation at = p.currentTokenLocation();
                JsonToken value = p.nextToken();
                if (!value.isScalarValue() || value == JsonToken.VALUE_NULL) {
                    throw new Problem(p, field + ": expected a string", at);
                }
                switch (field) {
                    case "job" -> job = job(p, p.getText(), at);
                    case "on" -> {
                        try {
                            on = condition(p.getText());
                        } catch (IllegalArgumentException e) {
                            throw new Problem(p, "on: " + e.getMessage(), at);
                        }
                    }
                    default -> throw new Problem(p, "unknown field '" + JobFile.clip(field)
                            + "' in after (fields there: job, on)", at);
                }
            }
            if (job == null) {
                throw new Problem(p, "an entry without job: {job: ID, on: success|any}", start);
            }
            return new After(job, on, start);
        }

        private static String job(JsonParser p, String text, JsonLocation at) throws Problem {
            if (text.isBlank()) {
                throw new Problem(p, "an empty job id", at);
            }
            return text.strip();
        }
    }

    /** {@code --after ID} or {@code --after ID:any} (also {@code ID:success}). */
    static After afterFlag(String flag) {
        int colon = flag.lastIndexOf(':');
        String job = colon < 0 ? flag : flag.substring(0, colon);
        DependencyCondition on = colon < 0 ? DependencyCondition.AFTER_SUCCESS : condition(flag.substring(colon + 1));
        if (job.isBlank()) {
            throw new IllegalArgumentException("an empty job id");
        }
        return new After(job.strip(), on, null);
    }

    /** "job-1", "arr-2 (any)": how get and errors write an entry. */
    static String describe(String job, DependencyCondition on) {
        return on == DependencyCondition.AFTER_ANY ? job + " (any end)" : job + " (success)";
    }
}
