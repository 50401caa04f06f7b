package dev.gpucloud.scheduler.sim.trace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Small trace files for tests: the fixtures under src/test/resources/traces, and files written on the fly. */
public final class TraceFixtures {

    private TraceFixtures() {
    }

    /** A fixture file from src/test/resources/traces. */
    public static Path fixture(String name) {
        try {
            var url = TraceFixtures.class.getResource("/traces/" + name);
            if (url == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes {@code lines} (joined with LF, with a final LF) to {@code dir/name}. */
    public static Path write(Path dir, String name, String... lines) {
        try {
            Path file = dir.resolve(name);
            Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The real traces directory (shared/traces) if this checkout has it: the system property
     * gpucloud.traces, else ../shared/traces from the repository or module directory.
     */
    public static Optional<Path> realTraces() {
        String property = System.getProperty("gpucloud.traces");
        List<Path> candidates = property != null
                ? List.of(Path.of(property))
                : List.of(Path.of("../shared/traces"), Path.of("../../shared/traces"));
        return candidates.stream().filter(Files::isDirectory).map(Path::toAbsolutePath).map(Path::normalize).findFirst();
    }
}
