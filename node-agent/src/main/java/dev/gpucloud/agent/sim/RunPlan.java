package dev.gpucloud.agent.sim;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * How long a simulated run lasts and how it exits, read from what the job asked to run: a command
 * {@code ["sleep", "N"]} runs N seconds (GNU suffixes s, m, h, d allowed); else the environment
 * variable {@code GPUCLOUD_SIM_SECONDS}; else the configured default. It exits with 0 unless
 * {@code GPUCLOUD_SIM_EXIT_CODE} says otherwise.
 */
public record RunPlan(Duration duration, int exitCode, String reason) {

    public static final String SECONDS_ENV = "GPUCLOUD_SIM_SECONDS";
    public static final String EXIT_CODE_ENV = "GPUCLOUD_SIM_EXIT_CODE";

    /** No simulated run lasts longer than this, whatever it asks. */
    public static final Duration LONGEST = Duration.ofDays(365);

    public static RunPlan of(List<String> command, Map<String, String> env, Duration fallback) {
        int exitCode = parseExitCode(env.get(EXIT_CODE_ENV));
        if (command.size() >= 2 && isSleep(command.get(0))) {
            Duration asked = parseDuration(command.get(1));
            if (asked != null) {
                return new RunPlan(asked, exitCode, "sleep " + command.get(1));
            }
        }
        Duration fromEnv = parseDuration(env.get(SECONDS_ENV));
        if (fromEnv != null) {
            return new RunPlan(fromEnv, exitCode, SECONDS_ENV + "=" + env.get(SECONDS_ENV));
        }
        return new RunPlan(fallback, exitCode, "default duration");
    }

    private static boolean isSleep(String program) {
        return program.equals("sleep") || program.endsWith("/sleep");
    }

    /** Seconds as GNU sleep reads them ("20", "2.5", "1m", "1h"), or null when it is not one. */
    static Duration parseDuration(String text) {
        if (text == null || text.isBlank() || text.length() > 32) {
            return null;
        }
        String value = text.strip();
        long unitSeconds = 1;
        char last = value.charAt(value.length() - 1);
        switch (last) {
            case 's' -> value = value.substring(0, value.length() - 1);
            case 'm' -> { unitSeconds = 60; value = value.substring(0, value.length() - 1); }
            case 'h' -> { unitSeconds = 3600; value = value.substring(0, value.length() - 1); }
            case 'd' -> { unitSeconds = 86_400; value = value.substring(0, value.length() - 1); }
            default -> { }
        }
        BigDecimal seconds;
        try {
            seconds = new BigDecimal(value).multiply(BigDecimal.valueOf(unitSeconds));
        } catch (NumberFormatException e) {
            return null;
        }
        if (seconds.signum() < 0) {
            return null;
        }
        if (seconds.compareTo(BigDecimal.valueOf(LONGEST.toSeconds())) > 0) {
            return LONGEST;
        }
        return Duration.ofMillis(seconds.movePointRight(3).longValue());
    }

    private static int parseExitCode(String text) {
        if (text == null || text.isBlank()) {
            return 0;
        }
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
