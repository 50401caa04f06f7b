package dev.gpucloud.agent.runner;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Sends POSIX signals to processes. {@link ProcessHandle} can only send SIGTERM and SIGKILL, so
 * any other signal (SIGUSR1 for a checkpoint) goes through the {@code kill} command.
 */
public final class Signals {

    private static final Set<String> KNOWN = Set.of("HUP", "INT", "QUIT", "USR1", "USR2", "TERM", "KILL", "CONT",
            "STOP", "ALRM", "WINCH", "PWR");

    private Signals() {
    }

    /** "SIGUSR1", "usr1" and "USR1" all name USR1; anything else is refused with the list of known ones. */
    public static String normalize(String signal) {
        if (signal == null || signal.isBlank()) {
            throw new IllegalArgumentException("signal must not be blank");
        }
        String name = signal.strip().toUpperCase(Locale.ROOT);
        if (name.startsWith("SIG")) {
            name = name.substring(3);
        }
        if (!KNOWN.contains(name)) {
            throw new IllegalArgumentException("unknown signal '" + signal + "'; known: " + KNOWN.stream().sorted().toList());
        }
        return name;
    }

    /** Sends {@code signal} to each live process of {@code pids}; null when sent, else what went wrong. */
    public static String send(String signal, List<Long> pids) {
        if (pids.isEmpty()) {
            return null;
        }
        List<String> command = new ArrayList<>(List.of("kill", "-s", normalize(signal)));
        pids.forEach(pid -> command.add(Long.toString(pid)));
        try {
            Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
            if (!kill.waitFor(5, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                return "kill -s " + signal + " did not finish in 5 s";
            }
            String output = new String(kill.getInputStream().readAllBytes()).strip();
            return kill.exitValue() == 0 ? null : "kill -s " + signal + " exited " + kill.exitValue() + ": " + output;
        } catch (IOException e) {
            return "cannot run kill: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while sending SIG" + signal;
        }
    }

    /** The process and all its descendants, parent first. */
    public static List<Long> tree(ProcessHandle process) {
        List<Long> pids = new ArrayList<>();
        pids.add(process.pid());
        process.descendants().forEach(p -> pids.add(p.pid()));
        return pids;
    }
}
