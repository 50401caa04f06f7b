package dev.gpucloud.contracts.limits;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the limits table into the docs between two marker comments, so the docs never disagree with
 * {@link Limits}. Run {@code ./mvnw -B -q -pl contracts compile && java -cp contracts/target/classes
 * dev.gpucloud.contracts.limits.LimitsDoc docs}; {@code LimitsDocTest} fails the build when the docs are stale.
 */
public final class LimitsDoc {

    public static final String BEGIN = "<!-- BEGIN GENERATED: limits table (dev.gpucloud.contracts.limits.LimitsDoc)"
            + " -->";
    public static final String END = "<!-- END GENERATED: limits table -->";
    /** The files that carry the table, relative to the docs directory. */
    public static final String[] FILES = {"api.md", "events.md"};

    private LimitsDoc() {
    }

    /** The generated block, markers included. */
    public static String block() {
        StringBuilder out = new StringBuilder();
        out.append(BEGIN).append('\n');
        out.append("<!-- Generated from contracts/src/main/java/dev/gpucloud/contracts/limits/Limits.java; do not edit by"
                + " hand. Regenerate: ./mvnw -B -q -pl contracts compile && java -cp contracts/target/classes"
                + " dev.gpucloud.contracts.limits.LimitsDoc docs -->\n\n");
        out.append("| limit | applies to | bound | why |\n|---|---|---|---|\n");
        for (Limit limit : Limits.all()) {
            out.append("| ").append(limit.name()).append(" | ").append(limit.appliesTo().replace("|", "\\|"))
                    .append(" | ").append(bound(limit)).append(" | ").append(limit.reason().replace("|", "\\|"))
                    .append(" |\n");
        }
        out.append("\nEvery string is also refused if it holds a NUL character or an unpaired UTF-16 surrogate"
                + " (invalid UTF-8 on the wire). Times: no time is earlier than ").append(Limits.EPOCH)
                .append(" or later than ").append(Limits.LATEST).append("; consumers also refuse an event time more than ")
                .append(Limits.EVENT_CLOCK_SKEW.toMinutes()).append(" minutes ahead of their clock.\n");
        out.append(END);
        return out.toString();
    }

    static String bound(Limit limit) {
        return switch (limit.kind()) {
            case TEXT -> limit.name().equals("record") ? "at most " + limit.max() + " bytes"
                    : limit.min() > 0 ? limit.min() + ".." + limit.max() + " characters"
                    : "at most " + limit.max() + " characters";
            case LIST, MAP -> limit.min() > 0 ? limit.min() + ".." + limit.max() + " entries"
                    : "at most " + limit.max() + " entries";
            case NUMBER -> limit.min() + ".." + limit.max();
            case TIME -> limit == Limits.DEADLINE ? "after now, at most " + Limits.DEADLINE_HORIZON.toDays()
                    + " days ahead" : "from " + Limits.EPOCH + " to now + " + Limits.EVENT_CLOCK_SKEW.toMinutes()
                    + " min";
        };
    }

    /** The document with its block replaced by the current table; fails if the markers are missing. */
    public static String render(String document, String name) {
        int begin = document.indexOf(BEGIN);
        int end = document.indexOf(END);
        if (begin < 0 || end < begin) {
            throw new IllegalStateException(name + " has no limits markers (" + BEGIN + " ... " + END + ")");
        }
        return document.substring(0, begin) + block() + document.substring(end + END.length());
    }

    /** Rewrites the table in each file of the docs directory given as the only argument. */
    public static void main(String[] args) throws IOException {
        Path docs = Path.of(args.length > 0 ? args[0] : "docs");
        for (String file : FILES) {
            Path path = docs.resolve(file);
            String before = Files.readString(path, StandardCharsets.UTF_8);
            String after = render(before, file);
            if (!after.equals(before)) {
                Files.writeString(path, after, StandardCharsets.UTF_8);
                System.out.println("updated " + path);
            }
        }
    }
}
