package dev.gpucloud.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The CLI's named targets, as kubectl's contexts: each names a scheduler (its address or addresses), the CA to trust
 * there and the profile whose token to send, and one of them may be current. Kept in {@code config.yaml} under
 * {@link Credentials#home()}, owner-only, written whole and moved into place, so a crash leaves the old file or the new.
 */
final class Contexts {

    /** The name that asks for no context at all (--context none): only flags, environment and defaults. */
    static final String NONE = "none";
    /** A context's name: as a profile's, 1..63 letters, digits, dots, dashes or underscores. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}");

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER).enable(YAMLGenerator.Feature.MINIMIZE_QUOTES))
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)
            .setSerializationInclusion(JsonInclude.Include.NON_NULL);

    /** One target; a field left null is not set by the context and comes from the environment or the default. */
    record Context(@JsonProperty("server") String server, @JsonProperty("ca-file") String caFile,
            @JsonProperty("profile") String profile) {
    }

    /** The whole file: which context is current (null: none) and every context by name. */
    record Config(@JsonProperty("current-context") String current,
            @JsonProperty("contexts") Map<String, Context> contexts) {
        Config {
            contexts = contexts == null ? new TreeMap<>() : new TreeMap<>(contexts);
        }

        static Config empty() {
            return new Config(null, null);
        }
    }

    /** The file could not be read or written, or names a context that is not there: one line for the user. */
    static final class Problem extends RuntimeException {
        Problem(String message) {
            super(message, null, false, false);
        }
    }

    private Contexts() {
    }

    static Path file() {
        return Credentials.home().resolve("config.yaml");
    }

    /** The file as it stands; an empty config where there is none. */
    static Config read() {
        Path file = file();
        if (!Files.exists(file)) {
            return Config.empty();
        }
        try {
            Config config = YAML.readValue(file.toFile(), Config.class);
            return config == null ? Config.empty() : config;
        } catch (IOException e) {
            throw new Problem("cannot read the CLI's contexts in " + file + ": "
                    + GpucloudCli.firstLine(String.valueOf(e.getMessage())) + " (fix it, or delete it and set the"
                    + " contexts again with gpucloud config set-context)");
        }
    }

    static void write(Config config) {
        Path file = file();
        try {
            Credentials.writePrivate(file, YAML.writeValueAsString(config));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** The context called {@code name}; an unknown name is a problem that lists the known ones and how to add it. */
    static Context named(Config config, String name) {
        Context context = config.contexts().get(name);
        if (context == null) {
            throw new Problem("no context '" + GpucloudCli.clip(name, 64) + "' in " + file() + " ("
                    + (config.contexts().isEmpty() ? "there is none" : "known: " + String.join(", ",
                    config.contexts().keySet())) + "); make it with gpucloud config set-context "
                    + (NAME.matcher(name).matches() ? name : "NAME") + " --server HOST:PORT");
        }
        return context;
    }

    /** A name that can be a context's; else an IllegalArgumentException that says what one looks like. */
    static String checkName(String name) {
        if (NONE.equals(name)) {
            throw new IllegalArgumentException("'none' is not a context's name: --context none means no context");
        }
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a context's name must be 1..63 letters, digits, dots, dashes or"
                    + " underscores, starting with a letter or digit, was '" + GpucloudCli.clip(String.valueOf(name), 64)
                    + "'");
        }
        return name;
    }

    /** Where the CLI's settings come from, highest first: a flag, the environment, the context, the default. */
    record Target(String server, Path caFile, String profile, String context, String serverFrom) {
    }

    /**
     * The scheduler, CA and profile a command uses. Each setting is taken from the first that gives it: its flag,
     * its environment variable, the context (--context, else GPUCLOUD_CONTEXT, else the current one; "none": no
     * context, and the file is not read), the default.
     * A context that names a server brings its own trust (its ca-file, else plaintext): the local stack's CA, the
     * default's, is not sent to someone else's scheduler.
     */
    static Target resolve(String flagServer, Path flagCa, String flagProfile, String flagContext,
            java.util.function.Function<String, String> env) {
        String contextName = first(flagContext, env.apply("GPUCLOUD_CONTEXT"));
        Config config = null;
        if (NONE.equals(contextName)) {
            config = Config.empty(); // the file is not read: whatever it holds, it cannot stop this command
            contextName = null;
        } else if (contextName == null) {
            config = read();
            contextName = config.current();
        }
        Context context = null;
        if (contextName != null) {
            context = named(config == null ? read() : config, contextName);
        }
        String fromContext = context == null ? null : context.server();
        String server;
        String serverFrom;
        if (flagServer != null) {
            server = flagServer;
            serverFrom = "--server";
        } else if (set(env.apply("GPUCLOUD_SERVER"))) {
            server = env.apply("GPUCLOUD_SERVER");
            serverFrom = "GPUCLOUD_SERVER";
        } else if (set(env.apply("GPUCLOUD_SCHEDULER"))) {
            server = env.apply("GPUCLOUD_SCHEDULER");
            serverFrom = "GPUCLOUD_SCHEDULER";
        } else if (fromContext != null) {
            server = fromContext;
            serverFrom = "context " + contextName;
        } else if (set(env.apply("GPUCLOUD_LOCAL_SERVER"))) {
            server = env.apply("GPUCLOUD_LOCAL_SERVER");
            serverFrom = "the local stack";
        } else {
            server = "localhost:8081";
            serverFrom = "the default";
        }
        String ca = first(flagCa == null ? null : flagCa.toString(), env.apply("GPUCLOUD_CA_FILE"),
                context == null ? null : context.caFile(),
                fromContext != null ? null : env.apply("GPUCLOUD_LOCAL_CA_FILE"));
        String profile = first(flagProfile, env.apply("GPUCLOUD_PROFILE"), context == null ? null : context.profile(),
                "default");
        return new Target(server, ca == null ? null : Path.of(ca), profile, contextName, serverFrom);
    }

    private static boolean set(String value) {
        return value != null && !value.isBlank();
    }

    private static String first(String... values) {
        for (String v : values) {
            if (set(v)) {
                return v.strip();
            }
        }
        return null;
    }

    /** The current context's name, if one is set. */
    static Optional<String> current() {
        return Optional.ofNullable(read().current());
    }
}
