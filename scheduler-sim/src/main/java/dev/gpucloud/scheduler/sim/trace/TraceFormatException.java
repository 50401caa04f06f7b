package dev.gpucloud.scheduler.sim.trace;

/**
 * A trace or spec file that cannot be used as it is, with where: "philly.csv:1043: column 'duration':
 * 'abc' is not a number". Line 0 means the file as a whole (missing, empty).
 */
public final class TraceFormatException extends RuntimeException {

    private final String file;
    private final int line;
    private final String column;
    private final String problem;

    public TraceFormatException(String file, int line, String column, String problem) {
        super(format(file, line, column, problem));
        this.file = file;
        this.line = line;
        this.column = column;
        this.problem = problem;
    }

    private static String format(String file, int line, String column, String problem) {
        StringBuilder text = new StringBuilder(file);
        if (line > 0) {
            text.append(':').append(line);
        }
        text.append(": ");
        if (column != null) {
            text.append("column '").append(column).append("': ");
        }
        return text.append(problem).toString();
    }

    /** The file's name (not its whole path), as it appears in the message. */
    public String file() {
        return file;
    }

    /** The 1-based line of the file, counting the header; 0 for the file as a whole. */
    public int line() {
        return line;
    }

    /** The column at fault, or null when the row or file as a whole is at fault. */
    public String column() {
        return column;
    }

    /** What is wrong, without the file, line and column. */
    public String problem() {
        return problem;
    }
}
