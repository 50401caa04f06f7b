package dev.gpucloud.agent.inventory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The datasets cached on the host's local NVMe: each sub-directory of the cache directory is one
 * dataset, named by the directory (hidden ones and ones still being filled, ending in ".partial"
 * or ".tmp", are left out). The scheduler uses the names to place jobs next to their data.
 */
public final class DatasetCache {

    private DatasetCache() {
    }

    public static List<String> list(Path dir) {
        if (dir == null || !Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .filter(n -> !n.startsWith(".") && !n.endsWith(".partial") && !n.endsWith(".tmp"))
                    .sorted().toList();
        } catch (IOException e) {
            return List.of();
        }
    }
}
