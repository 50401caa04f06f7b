package dev.gpucloud.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * CPU time of the processes a benchmark runs against, read from Linux's {@code /proc}: per process its user
 * plus system time, and the part of it spent by the JIT compiler's threads (a JVM that has not warmed up
 * spends much of its CPU there, which is not what the steady state costs). A name may stand for several
 * processes ({@code postgres}: every process whose command is postgres). Where {@code /proc} cannot be read,
 * every figure is absent and the benchmark says so rather than guessing.
 */
final class ProcessCpu {

    /** Clock ticks per second of {@code /proc/<pid>/stat}'s times: 100 on every Linux the project runs on. */
    private static final double TICKS_PER_SECOND = 100;

    /** One process or group to measure: a name, and either pids or a command name to match. */
    record Target(String name, List<Long> pids, String command) {
    }

    /** CPU seconds so far: the whole process, and its JIT compiler threads. */
    record Reading(double totalSeconds, double jitSeconds) {
        Reading minus(Reading earlier) {
            return new Reading(totalSeconds - earlier.totalSeconds, jitSeconds - earlier.jitSeconds);
        }
    }

    private final List<Target> targets;

    private ProcessCpu(List<Target> targets) {
        this.targets = targets;
    }

    /**
     * Parses {@code name=pid[+pid...],name=@command,...}: e.g. {@code scheduler=4711,agent=4712,postgres=@postgres}.
     * Throws {@link IllegalArgumentException} naming the entry that is wrong.
     */
    static ProcessCpu parse(String spec) {
        List<Target> targets = new ArrayList<>();
        for (String entry : spec.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            int eq = entry.indexOf('=');
            if (eq <= 0 || eq == entry.length() - 1) {
                throw new IllegalArgumentException("'" + entry + "' is not name=pid or name=@command");
            }
            String name = entry.substring(0, eq).trim();
            String what = entry.substring(eq + 1).trim();
            if (what.startsWith("@")) {
                targets.add(new Target(name, List.of(), what.substring(1)));
                continue;
            }
            List<Long> pids = new ArrayList<>();
            for (String p : what.split("\\+")) {
                try {
                    pids.add(Long.parseLong(p.trim()));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("'" + entry + "': '" + p + "' is not a process id");
                }
            }
            targets.add(new Target(name, List.copyOf(pids), null));
        }
        targets.add(new Target("driver", List.of(ProcessHandle.current().pid()), null));
        return new ProcessCpu(List.copyOf(targets));
    }

    /** What each target has used so far (absent: its processes could not be read). */
    Map<String, Reading> read() {
        Map<String, Reading> out = new LinkedHashMap<>();
        for (Target t : targets) {
            List<Long> pids = t.command() == null ? t.pids() : pidsOf(t.command());
            double total = 0;
            double jit = 0;
            boolean any = false;
            for (long pid : pids) {
                double[] r = readProcess(pid);
                if (r != null) {
                    any = true;
                    total += r[0];
                    jit += r[1];
                }
            }
            if (any) {
                out.put(t.name(), new Reading(total, jit));
            }
        }
        return out;
    }

    /**
     * One line per target: CPU milliseconds per job over the window (its JIT part in brackets when over 5%),
     * and the cores it used on average.
     */
    static String perJob(Map<String, Reading> before, Map<String, Reading> after, double windowSeconds, long jobs) {
        StringBuilder sb = new StringBuilder();
        double sum = 0;
        for (var e : after.entrySet()) {
            Reading b = before.get(e.getKey());
            if (b == null) {
                continue;
            }
            Reading d = e.getValue().minus(b);
            sum += d.totalSeconds();
            sb.append(String.format(Locale.ROOT, "%s %.2f ms", e.getKey(), jobs == 0 ? Double.NaN
                    : d.totalSeconds() * 1000 / jobs));
            if (d.jitSeconds() > 0.05 * d.totalSeconds()) {
                sb.append(String.format(Locale.ROOT, " (JIT %.2f)", jobs == 0 ? Double.NaN
                        : d.jitSeconds() * 1000 / jobs));
            }
            sb.append(String.format(Locale.ROOT, " = %.2f cores; ", d.totalSeconds() / windowSeconds));
        }
        if (sb.length() == 0) {
            return "not measured (no /proc to read)";
        }
        sb.append(String.format(Locale.ROOT, "all %.2f ms = %.2f cores", jobs == 0 ? Double.NaN : sum * 1000 / jobs,
                sum / windowSeconds));
        return sb.toString();
    }

    private static List<Long> pidsOf(String command) {
        List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path d : dirs) {
                try {
                    if (Files.readString(d.resolve("comm")).strip().equals(command)) {
                        pids.add(Long.parseLong(d.getFileName().toString()));
                    }
                } catch (IOException | NumberFormatException e) {
                    // gone meanwhile
                }
            }
        } catch (IOException e) {
            return List.of();
        }
        return pids;
    }

    /** {total, jit} CPU seconds of one process, or null when it cannot be read. */
    private static double[] readProcess(long pid) {
        Path dir = Path.of("/proc", Long.toString(pid));
        double[] total = ticks(dir.resolve("stat"));
        if (total == null) {
            return null;
        }
        double jit = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(dir.resolve("task"))) {
            for (Path t : tasks) {
                double[] r = ticks(t.resolve("stat"));
                if (r != null && r[1] != 0) {
                    jit += r[0];
                }
            }
        } catch (IOException e) {
            // threads not readable: no JIT part
        }
        return new double[] {total[0], jit};
    }

    /** {utime + stime in seconds, 1 if the thread is a JIT compiler thread}, from a stat file; null if unreadable. */
    private static double[] ticks(Path stat) {
        try {
            String s = Files.readString(stat);
            int open = s.indexOf('(');
            int close = s.lastIndexOf(')');
            String comm = s.substring(open + 1, close);
            String[] f = s.substring(close + 2).split(" ");
            // after the command: state(0) ... utime(11) stime(12)
            double seconds = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
            return new double[] {seconds, comm.contains("CompilerThre") ? 1 : 0};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
