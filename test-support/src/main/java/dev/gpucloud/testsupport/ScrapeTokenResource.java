package dev.gpucloud.testsupport;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/** Gives the service a scrape token file, as ./gpucloud up does: its /q/metrics then answers that token only. */
public class ScrapeTokenResource implements QuarkusTestResourceLifecycleManager {

    /** The token the file holds, for the test to send. */
    public static final String TOKEN = "scrape-" + UUID.randomUUID();

    @Override
    public Map<String, String> start() {
        try {
            Path file = Files.createTempFile("gpucloud-scrape", ".token");
            Files.writeString(file, TOKEN + "\n");
            file.toFile().deleteOnExit();
            return Map.of("gpucloud.http.scrape-token-file", file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void stop() {
    }
}
