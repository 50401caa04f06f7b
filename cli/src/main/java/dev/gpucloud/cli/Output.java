package dev.gpucloud.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * How a read command prints what it read: {@code text} (a table, or lines for one object), {@code wide} (the table
 * with more columns), {@code json} or {@code yaml} (every field, for scripts: a proto message in protobuf's JSON
 * mapping, with fields that hold their default value written too, so a script finds {@code runningJobs: 0} rather
 * than no key). A picocli mixin, so every read command spells it the same way.
 */
final class Output {

    /** The formats; a command takes those that make sense for it and names them when given another. */
    enum Format { TEXT, WIDE, JSON, YAML }

    /** text, wide, json or yaml, in any case. */
    static final class OfFormat extends Choice<Format> {
        OfFormat() {
            super(Format.class, "");
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS));
    private static final JsonFormat.Printer PROTO_JSON = JsonFormat.printer().alwaysPrintFieldsWithNoPresence();

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec mixee;

    @Option(names = {"-o", "--output"}, defaultValue = "text", converter = OfFormat.class, paramLabel = "FORMAT",
            description = "text, wide (a table with more columns), json or yaml (every field: docs/cli.md, \"Output\").")
    Format format;

    @Option(names = "--no-headers", description = "A table without its header line.")
    boolean noHeaders;

    /** The format asked for, once checked to be one that the command prints. */
    Format format(Format... accepted) {
        EnumSet<Format> ok = EnumSet.copyOf(Arrays.asList(accepted));
        if (!ok.contains(format)) {
            throw new CommandLine.ParameterException(mixee.commandLine(), "-o " + Choice.word(format.name()) + ": "
                    + mixee.qualifiedName() + " prints " + ok.stream().map(f -> Choice.word(f.name()))
                    .collect(Collectors.joining(", ")) + (format == Format.WIDE ? " (it has no table to widen)" : ""));
        }
        return format;
    }

    boolean structured() {
        return format == Format.JSON || format == Format.YAML;
    }

    /** A proto message as JSON (protobuf's mapping) or YAML (the same tree); for {@link #structured()} formats. */
    String document(MessageOrBuilder message) {
        return document(protoTree(message));
    }

    /** A JSON tree as the JSON or YAML that was asked for, ending in a newline. */
    String document(JsonNode tree) {
        try {
            return format == Format.YAML ? YAML.writeValueAsString(tree)
                    : JSON.writer(new JsonLayout()).writeValueAsString(tree) + System.lineSeparator();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + format + ": " + e.getMessage(), e);
        }
    }

    /** Two-space indents and "name": value, as protobuf's own printer lays JSON out. */
    private static final class JsonLayout extends com.fasterxml.jackson.core.util.DefaultPrettyPrinter {
        JsonLayout() {
            _objectIndenter = new com.fasterxml.jackson.core.util.DefaultIndenter("  ", "\n");
            _arrayIndenter = _objectIndenter;
        }

        private JsonLayout(JsonLayout base) {
            super(base);
        }

        @Override
        public JsonLayout createInstance() {
            return new JsonLayout(this);
        }

        @Override
        public void writeObjectFieldValueSeparator(com.fasterxml.jackson.core.JsonGenerator g) throws java.io.IOException {
            g.writeRaw(": ");
        }

        @Override
        public void writeEndArray(com.fasterxml.jackson.core.JsonGenerator g, int entries) throws java.io.IOException {
            if (entries == 0) {
                if (!_arrayIndenter.isInline()) {
                    --_nesting;
                }
                g.writeRaw(']');
                return;
            }
            super.writeEndArray(g, entries);
        }

        @Override
        public void writeEndObject(com.fasterxml.jackson.core.JsonGenerator g, int entries) throws java.io.IOException {
            if (entries == 0) {
                if (!_objectIndenter.isInline()) {
                    --_nesting;
                }
                g.writeRaw('}');
                return;
            }
            super.writeEndObject(g, entries);
        }
    }

    /** A proto message in protobuf's JSON mapping (lowerCamelCase names, enums by name, every field), as a tree. */
    static JsonNode protoTree(MessageOrBuilder message) {
        try {
            return JSON.readTree(PROTO_JSON.print(message));
        } catch (InvalidProtocolBufferException | JsonProcessingException e) {
            throw new IllegalStateException("no JSON form: " + e.getMessage(), e);
        }
    }

    /** A proto message as one line of JSON, for output read line by line (a stream of log lines). */
    static String jsonLine(MessageOrBuilder message) {
        try {
            return JSON.writeValueAsString(JSON.readTree(PROTO_JSON.print(message)));
        } catch (InvalidProtocolBufferException | JsonProcessingException e) {
            throw new IllegalStateException("no JSON form: " + e.getMessage(), e);
        }
    }

    /** A table: its columns as wide as their widest cell, the last one not padded; without a header on request. */
    static final class Table {
        private final List<String> header;
        private final List<List<String>> rows = new ArrayList<>();

        Table(String... header) {
            this.header = List.of(header);
        }

        Table row(Object... cells) {
            if (cells.length != header.size()) {
                throw new IllegalArgumentException("a row of " + cells.length + " cells in a table of " + header.size());
            }
            rows.add(Arrays.stream(cells).map(c -> c == null || String.valueOf(c).isEmpty() ? "-" : String.valueOf(c))
                    .toList());
            return this;
        }

        void print(PrintWriter out, boolean withHeader) {
            int[] width = new int[header.size()];
            List<List<String>> all = new ArrayList<>();
            if (withHeader) {
                all.add(header);
            }
            all.addAll(rows);
            for (List<String> row : all) {
                for (int i = 0; i < row.size(); i++) {
                    width[i] = Math.max(width[i], row.get(i).length());
                }
            }
            for (List<String> row : all) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < row.size(); i++) {
                    line.append(i == row.size() - 1 ? row.get(i) : String.format("%-" + width[i] + "s   ", row.get(i)));
                }
                out.println(line.toString().stripTrailing());
            }
            out.flush();
        }
    }

    /** Prints {@code table} as the options say (with or without its header). */
    void print(PrintWriter out, Table table) {
        table.print(out, !noHeaders);
    }
}
