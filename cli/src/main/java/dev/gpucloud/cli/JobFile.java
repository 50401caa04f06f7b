package dev.gpucloud.cli;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.google.protobuf.Timestamp;
import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.Dependency;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import dev.gpucloud.contracts.limits.Limits;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A job described in a file, {@code gpucloud submit -f job.yaml} (or {@code .json}): one schema for everything
 * the contract's JobSpec has, in the words and units a person writes (docs/jobspec.md). Reading is strict: an
 * unknown field, a wrong type, a duplicate key or a value in the wrong unit is one error naming the field, and
 * the line and column where the file says it; nothing is sent. A file whose top holds {@code jobs:} is a DAG of
 * such jobs ({@link DagFile}).
 */
record JobFile(
        String name,
        String tenant,
        @JsonProperty("request_id") String requestId,
        JobFileFields.ArrayField array,
        List<JobFileFields.After> after,
        List<JobFile> jobs,
        Integer workers,
        Resources resources,
        Word<Interconnect> interconnect,
        Word<CapacityPreference> capacity,
        Word<PriorityClass> priority,
        Checkpoint checkpoint,
        @JsonProperty("runtime_estimate") Seconds runtimeEstimate,
        @JsonProperty("time_limit") Seconds timeLimit,
        When deadline,
        @JsonProperty("price_ceiling") Usd priceCeiling,
        Map<String, String> env,
        @JsonProperty("secret_env") List<String> secretEnv,
        Command command) {

    /** The largest file read: a job is a page, not a data set. */
    static final long MAX_BYTES = 1 << 20;

    /** What each worker gets. */
    record Resources(
            Integer gpus,
            String mig,
            @JsonProperty("milli_gpu") Integer milliGpu,
            Cpu cpu,
            Mebibytes memory,
            @JsonProperty("gpu_models") List<String> gpuModels,
            @JsonProperty("min_gpu_memory") Mebibytes minGpuMemory) {
    }

    /** How often the job checkpoints, and where to. */
    record Checkpoint(Seconds every, String to) {
    }

    /** A file that cannot be read as a job: the message says where and what. */
    static final class Invalid extends Exception {
        Invalid(String message) {
            super(message);
        }
    }

    /** Reads {@code file} (YAML, or JSON where its name ends in .json). */
    static JobFile read(Path file) throws Invalid {
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_BYTES) {
                throw new Invalid(file + ": " + Files.size(file) + " bytes; a job file is at most " + MAX_BYTES);
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new Invalid(file + ": no such file");
        } catch (IOException e) {
            throw new Invalid(file + ": cannot read it (" + e.getMessage() + ")");
        }
        if (new String(bytes, java.nio.charset.StandardCharsets.UTF_8).isBlank()) {
            throw new Invalid(file + ": empty; a job file is a mapping of fields (docs/jobspec.md)");
        }
        ObjectMapper mapper = file.getFileName().toString().endsWith(".json") ? JsonMapper.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build()
                : YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
        mapper.registerModule(new Words());
        mapper.addHandler(new UnknownFields());
        mapper.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
        try {
            return mapper.readValue(bytes, JobFile.class);
        } catch (JsonProcessingException e) {
            throw new Invalid(file + describe(e, mapper, bytes));
        } catch (IOException e) {
            throw new Invalid(file + ": cannot read it (" + e.getMessage() + ")");
        }
    }

    /** " line L, column C: FIELD: what is wrong", from Jackson's account of it. */
    static String describe(JsonProcessingException e, ObjectMapper mapper, byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        String path = e instanceof JsonMappingException m ? path(m.getPath()) : "";
        com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
        if (e instanceof UnknownField u) {
            at = locate(mapper, bytes, (u.where.isEmpty() ? "" : u.where + ".") + u.field);
        } else if (at == null || at.getLineNr() <= 0) {
            at = locate(mapper, bytes, path);
        }
        if (at != null && at.getLineNr() > 0) {
            sb.append(" line ").append(at.getLineNr()).append(", column ").append(at.getColumnNr());
        }
        sb.append(": ");
        if (e instanceof UnknownField u) {
            String field = u.field;
            String where = u.where;
            List<String> known = u.known;
            return sb.append("unknown field '").append(clip(field)).append("'")
                    .append(where.isEmpty() ? "" : " in " + where)
                    .append(known.isEmpty() ? "" : " (fields there: " + String.join(", ", known) + ")").toString();
        }
        sb.append(path.isEmpty() ? "" : path + ": ");
        if (e instanceof JobFileFields.Problem) {
            return sb.append(e.getOriginalMessage().replaceAll("\\p{Cntrl}", "?")).toString();
        }
        if (e instanceof ValueInstantiationException v && v.getCause() != null) {
            return sb.append(v.getCause().getMessage()).toString();
        }
        if (e instanceof InvalidFormatException f) {
            return sb.append("'").append(clip(String.valueOf(f.getValue()))).append("' is not ")
                    .append(kind(f.getTargetType())).toString();
        }
        if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
            return sb.append("expected ").append(kind(m.getTargetType())).toString();
        }
        // the file is not well-formed YAML or JSON (or a key is there twice): the parser's own first line
        String message = String.valueOf(e.getOriginalMessage());
        return sb.append(clip(message.lines().findFirst().orElse(message))).toString();
    }

    /**
     * A field the schema does not have, caught where the parser meets its name (Jackson's own report comes after
     * a record's fields are all read, at the mapping's end, so its line would be the wrong one).
     */
    static final class UnknownField extends JsonMappingException {
        final String field;
        final String where;
        final List<String> known;

        UnknownField(JsonParser p, String field, String where, List<String> known) {
            super(p, "unknown field " + field);
            this.field = field;
            this.where = where;
            this.known = known;
        }
    }

    /** Turns an unknown field into an {@link UnknownField} at its own line. */
    static final class UnknownFields extends com.fasterxml.jackson.databind.deser.DeserializationProblemHandler {
        @Override
        public boolean handleUnknownProperty(com.fasterxml.jackson.databind.DeserializationContext ctxt, JsonParser p,
                com.fasterxml.jackson.databind.JsonDeserializer<?> deserializer, Object beanOrClass,
                String propertyName) throws IOException {
            List<String> names = new ArrayList<>();
            for (com.fasterxml.jackson.core.JsonStreamContext c = p.getParsingContext(); c != null; c = c.getParent()) {
                if (c.getCurrentName() != null) {
                    names.add(0, c.getCurrentName());
                }
            }
            // the parser may stand on the field's name or already in its value: either way the field itself goes
            while (!names.isEmpty() && names.get(names.size() - 1).equals(propertyName)) {
                names.remove(names.size() - 1);
            }
            List<String> known = deserializer.getKnownPropertyNames() == null ? List.of()
                    : deserializer.getKnownPropertyNames().stream().map(String::valueOf).sorted().toList();
            throw new UnknownField(p, propertyName, String.join(".", names), known);
        }
    }

    /**
     * Where the file names the field at {@code path} (names joined by '.', list indices left out): a second read of
     * its tokens, since what Jackson reports from inside a record may carry no location. Null where not found.
     */
    static com.fasterxml.jackson.core.JsonLocation locate(ObjectMapper mapper, byte[] bytes, String path) {
        if (path.isEmpty()) {
            return null;
        }
        String wanted = path.replaceAll("\\[\\d+]", "");
        try (JsonParser p = mapper.createParser(bytes)) {
            for (com.fasterxml.jackson.core.JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                    List<String> names = new ArrayList<>();
                    for (com.fasterxml.jackson.core.JsonStreamContext c = p.getParsingContext(); c != null;
                            c = c.getParent()) {
                        if (c.inObject() && c.getCurrentName() != null) {
                            names.add(0, c.getCurrentName());
                        }
                    }
                    if (String.join(".", names).equals(wanted)) {
                        return p.currentTokenLocation();
                    }
                }
            }
        } catch (IOException e) {
            // a file that does not parse this far: its own error said where
        }
        return null;
    }

    private static String path(List<JsonMappingException.Reference> refs) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference ref : refs) {
            if (ref.getFieldName() != null) {
                sb.append(sb.isEmpty() ? "" : ".").append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                sb.append('[').append(ref.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    private static String kind(Class<?> type) {
        if (type == Integer.class || type == int.class || type == Long.class) {
            return "a whole number";
        }
        if (type == String.class) {
            return "a string";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        if (Map.class.isAssignableFrom(type) || type.isRecord() && type != Word.class) {
            return "a mapping of fields";
        }
        return "a value of the kind docs/jobspec.md gives";
    }

    /** The CLI's own clip, on one line: a file's value may hold a newline. */
    static String clip(String value) {
        return GpucloudCli.clip(value, 64).replaceAll("\\p{Cntrl}", "?");
    }

    /**
     * The JobSpec this file describes. {@code environment} gives the values of {@code secret_env}'s names (the
     * submitter's own variables: a file holds no secret).
     */
    JobSpec toSpec(Function<String, String> environment) throws Invalid {
        if (jobs != null) {
            throw new Invalid("jobs: a DAG file (docs/jobspec.md, \"DAG files\"); its jobs are submitted one by one");
        }
        JobSpec.Builder spec = JobSpec.newBuilder();
        if (command == null || command.argv().isEmpty()) {
            throw new Invalid("command: every job has one (a list of words, or a string run by /bin/sh -c)");
        }
        spec.addAllCommand(command.argv());
        spec.setName(name != null && !name.isBlank() ? name : command.argv().get(command.shell() ? 2 : 0)
                .split("\\s+")[0]);
        int w = workers == null ? 1 : workers;
        if (w < 1) {
            throw new Invalid("workers: at least 1, is " + w);
        }
        spec.setWorkers(w);
        Resources r = resources == null ? new Resources(null, null, null, null, null, null, null) : resources;
        boolean shared = r.mig() != null || r.milliGpu() != null;
        int gpus = r.gpus() == null ? (shared ? 0 : 1) : r.gpus();
        if (gpus < 0) {
            throw new Invalid("resources.gpus: 0 or more, is " + gpus);
        }
        spec.setGpusPerWorker(gpus);
        if (r.mig() != null) {
            spec.setMigProfile(r.mig());
        }
        if (r.milliGpu() != null) {
            if (r.milliGpu() < 1 || r.milliGpu() > 999) {
                throw new Invalid("resources.milli_gpu: 1..999 (thousandths of one GPU), is " + r.milliGpu());
            }
            spec.setMilliGpu(r.milliGpu());
        }
        if (r.cpu() != null) {
            spec.setCpuMillisPerWorker(r.cpu().millis());
        }
        if (r.memory() != null) {
            spec.setMemoryMibPerWorker(r.memory().mib());
        }
        if (r.gpuModels() != null) {
            spec.addAllGpuModels(r.gpuModels());
        }
        if (r.minGpuMemory() != null) {
            spec.setMinGpuMemoryMib(r.minGpuMemory().mib());
        }
        if (interconnect != null) {
            spec.setInterconnect(interconnect.value());
        }
        if (capacity != null) {
            spec.setCapacity(capacity.value());
        }
        if (priority != null) {
            spec.setPriority(priority.value());
        }
        if (checkpoint != null) {
            if (checkpoint.every() == null) {
                throw new Invalid("checkpoint.every: how often the job checkpoints (e.g. 30m) is needed with checkpoint");
            }
            spec.setCheckpoint(CheckpointPolicy.newBuilder().setIntervalSeconds((int) checkpoint.every().seconds())
                    .setLocation(checkpoint.to() == null ? "" : checkpoint.to()));
        }
        if (runtimeEstimate != null) {
            spec.setRuntimeEstimateSeconds(runtimeEstimate.seconds());
        }
        if (timeLimit != null) {
            spec.setTimeLimitSeconds(timeLimit.seconds());
        }
        if (deadline != null) {
            spec.setDeadline(Timestamp.newBuilder().setSeconds(deadline.at().getEpochSecond())
                    .setNanos(deadline.at().getNano()));
        }
        if (priceCeiling != null) {
            spec.setPriceCeilingMicrosPerHour(priceCeiling.micros());
        }
        if (env != null) {
            for (Map.Entry<String, String> e : env.entrySet()) {
                if (e.getValue() == null) {
                    throw new Invalid("env." + clip(e.getKey()) + ": no value (write \"\" for an empty one)");
                }
            }
            spec.putAllEnv(env);
        }
        if (after != null) {
            if (after.size() > Limits.DEPENDENCIES.max()) {
                throw new Invalid("after: at most " + Limits.DEPENDENCIES.max() + " jobs, has " + after.size());
            }
            // as the file writes them: in a DAG file a name is replaced by the id its job got (DagSubmission)
            after.forEach(a -> spec.addAfter(Dependency.newBuilder().setJobId(a.job()).setOn(a.on())));
        }
        if (secretEnv != null) {
            Map<String, String> secrets = new LinkedHashMap<>();
            for (String variable : secretEnv) {
                if (variable == null || !variable.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                    throw new Invalid("secret_env: a list of variable names ([A-Za-z_][A-Za-z0-9_]*) whose values"
                            + " come from your environment, has '" + clip(String.valueOf(variable)) + "'");
                }
                String value = environment.apply(variable);
                if (value == null) {
                    throw new Invalid("secret_env: your environment has no variable " + variable
                            + " (export it before submitting)");
                }
                if (secrets.put(variable, value) != null) {
                    throw new Invalid("secret_env: " + variable + " is listed twice");
                }
            }
            spec.putAllSecretEnv(secrets);
        }
        return spec.build();
    }

    // ---- values in a person's units; each refuses what it cannot read, naming the units it takes

    /** none, nvlink, rdma; on-demand, spot, spot-preferred; low, normal, high: as the flags read them. */
    record Word<E extends Enum<E>>(E value) {
    }

    /** Reads the three kinds of word (Jackson cannot build a generic record from a string by itself). */
    static final class Words extends com.fasterxml.jackson.databind.module.SimpleModule {
        Words() {
            addDeserializer(Word.class, new WordReader());
        }
    }

    /** A word of a field whose choices come from the contract's enum for that field. */
    static final class WordReader extends com.fasterxml.jackson.databind.JsonDeserializer<Word<?>>
            implements com.fasterxml.jackson.databind.deser.ContextualDeserializer {
        private final Choice<?> choice;

        WordReader() {
            this(null);
        }

        WordReader(Choice<?> choice) {
            this.choice = choice;
        }

        @Override
        public com.fasterxml.jackson.databind.JsonDeserializer<?> createContextual(
                com.fasterxml.jackson.databind.DeserializationContext ctxt,
                com.fasterxml.jackson.databind.BeanProperty property) {
            Class<?> of = property == null ? null : property.getType().containedType(0).getRawClass();
            if (of == Interconnect.class) {
                return new WordReader(new Choice.OfInterconnect());
            }
            if (of == CapacityPreference.class) {
                return new WordReader(new Choice.OfCapacity());
            }
            return new WordReader(new Choice.OfPriority());
        }

        @Override
        public Word<?> deserialize(JsonParser p, com.fasterxml.jackson.databind.DeserializationContext ctxt)
                throws IOException {
            if (!p.currentToken().isScalarValue()) {
                return (Word<?>) ctxt.handleUnexpectedToken(String.class, p);
            }
            String text = p.getValueAsString();
            try {
                return wrap(choice, text);
            } catch (picocli.CommandLine.TypeConversionException e) {
                throw ValueInstantiationException.from(p, e.getMessage(), ctxt.constructType(Word.class), e);
            }
        }
    }

    private static <E extends Enum<E>> Word<E> wrap(Choice<E> choice, String text) {
        return new Word<>(choice.convert(text));
    }

    /** Memory: "64Gi", "512Mi", "1Ti" (binary units, as Kubernetes writes them). */
    record Mebibytes(long mib) {
        private static final Pattern FORM = Pattern.compile("(\\d+)\\s*(Mi|Gi|Ti)");

        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Mebibytes of(JsonNode node) {
            Matcher m = FORM.matcher(node.asText().strip());
            if (!node.isTextual() || !m.matches()) {
                throw new IllegalArgumentException("'" + clip(node.asText()) + "' is not an amount of memory: write"
                        + " it with its unit, e.g. 512Mi, 64Gi or 1Ti");
            }
            long n = Long.parseLong(m.group(1));
            return new Mebibytes(switch (m.group(2)) {
                case "Mi" -> n;
                case "Gi" -> n * 1024;
                default -> n * 1024 * 1024;
            });
        }
    }

    /** CPU per worker: cores (4, 0.5) or millicores ("500m"). */
    record Cpu(int millis) {
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Cpu of(JsonNode node) {
            String text = node.asText().strip();
            try {
                BigDecimal millis = node.isNumber() ? node.decimalValue().movePointRight(3)
                        : text.endsWith("m") ? new BigDecimal(text.substring(0, text.length() - 1))
                        : new BigDecimal(text).movePointRight(3);
                if (millis.signum() <= 0 || millis.stripTrailingZeros().scale() > 0
                        || millis.compareTo(BigDecimal.valueOf(1_000_000)) > 0) {
                    throw new NumberFormatException();
                }
                return new Cpu(millis.intValueExact());
            } catch (NumberFormatException | ArithmeticException e) {
                throw new IllegalArgumentException("'" + clip(text) + "' is not a CPU amount: cores (4, 0.5) or"
                        + " millicores (500m), above 0 and at most 1000 cores");
            }
        }
    }

    /** A duration: "90s", "30m", "2h", "1h30m", or a whole number of seconds. */
    record Seconds(long seconds) {
        private static final Pattern FORM = Pattern.compile("(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?");

        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Seconds of(JsonNode node) {
            String text = node.asText().strip();
            if (node.isIntegralNumber() && node.asLong() >= 0 && node.asLong() <= 366L * 24 * 3600) {
                return new Seconds(node.asLong());
            }
            if (node.isIntegralNumber() && node.asLong() > 0) {
                throw new IllegalArgumentException("'" + clip(text) + "' seconds is more than a year");
            }
            Matcher m = FORM.matcher(text);
            if (!node.isTextual() || text.isEmpty() || !m.matches()) {
                throw new IllegalArgumentException("'" + clip(text) + "' is not a duration: e.g. 90s, 30m, 2h or"
                        + " 1h30m, or a whole number of seconds");
            }
            long s = 0;
            for (int g = 1; g <= 3; g++) {
                if (m.group(g) != null) {
                    s += Long.parseLong(m.group(g)) * (g == 1 ? 3600 : g == 2 ? 60 : 1);
                }
            }
            if (s > 366L * 24 * 3600) {
                throw new IllegalArgumentException("'" + clip(text) + "' is more than a year");
            }
            return new Seconds(s);
        }
    }

    /** A moment, ISO 8601 with its offset: 2026-12-24T18:00:00Z, 2026-12-24T19:00:00+01:00. */
    record When(Instant at) {
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static When of(JsonNode node) {
            try {
                return new When(OffsetDateTime.parse(node.asText().strip()).toInstant());
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("'" + clip(node.asText()) + "' is not a moment: ISO 8601 with"
                        + " its offset, e.g. 2026-12-24T18:00:00Z");
            }
        }
    }

    /** US dollars per job-hour, e.g. 12.5: the most the job may cost an hour. */
    record Usd(long micros) {
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Usd of(JsonNode node) {
            try {
                BigDecimal usd = node.isNumber() ? node.decimalValue() : new BigDecimal(node.asText().strip());
                if (usd.signum() <= 0 || usd.compareTo(BigDecimal.valueOf(1_000_000)) > 0) {
                    throw new NumberFormatException();
                }
                return new Usd(usd.movePointRight(6).setScale(0, java.math.RoundingMode.UNNECESSARY).longValueExact());
            } catch (NumberFormatException | ArithmeticException e) {
                throw new IllegalArgumentException("'" + clip(node.asText()) + "' is not a price: US dollars per"
                        + " job-hour above 0, at most 6 decimals, e.g. 12.50");
            }
        }
    }

    /** The worker's command: a list of words (argv), or a string that /bin/sh -c runs. */
    record Command(List<String> argv, boolean shell) {
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static Command of(JsonNode node) {
            if (node.isTextual()) {
                if (node.asText().isBlank()) {
                    throw new IllegalArgumentException("an empty command");
                }
                return new Command(List.of("/bin/sh", "-c", node.asText()), true);
            }
            if (node.isArray() && !node.isEmpty()) {
                List<String> argv = new ArrayList<>();
                for (JsonNode word : node) {
                    if (!word.isValueNode() || word.isNull()) {
                        throw new IllegalArgumentException("each word of the command is a string, one is "
                                + clip(word.toString()));
                    }
                    argv.add(word.asText());
                }
                return new Command(List.copyOf(argv), false);
            }
            throw new IllegalArgumentException("a list of words ([python, train.py]) or a string for /bin/sh -c,"
                    + " not " + (node.isArray() ? "an empty list" : clip(node.toString())));
        }
    }
}
