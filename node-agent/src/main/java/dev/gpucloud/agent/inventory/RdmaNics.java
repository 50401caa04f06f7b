package dev.gpucloud.agent.inventory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads the host's RDMA NICs from sysfs: {@code <root>/class/infiniband/<device>/ports/<n>/} with
 * its {@code state} ("4: ACTIVE"), {@code link_layer} ("InfiniBand", "Ethernet") and {@code rate}
 * ("200 Gb/sec (4X HDR)"). The root is configurable, so tests build a fake tree. A file that is
 * missing or unreadable reads as "unknown"; a host without RDMA has no ports.
 */
public final class RdmaNics {

    private static final Pattern RATE = Pattern.compile("^\\s*([0-9]+(?:\\.[0-9]+)?)\\s*Gb/sec");

    private RdmaNics() {
    }

    public static List<RdmaPort> read(Path sysfsRoot) {
        Path base = sysfsRoot.resolve("class").resolve("infiniband");
        List<RdmaPort> ports = new ArrayList<>();
        if (!Files.isDirectory(base)) {
            return ports;
        }
        for (Path device : children(base)) {
            Path portsDir = device.resolve("ports");
            for (Path port : children(portsDir)) {
                int number;
                try {
                    number = Integer.parseInt(port.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                String state = value(port.resolve("state"));
                int colon = state.indexOf(':');
                if (colon >= 0) {
                    state = state.substring(colon + 1).strip();
                }
                String rate = value(port.resolve("rate"));
                Matcher m = RATE.matcher(rate);
                double gbps = m.find() ? Double.parseDouble(m.group(1)) : 0;
                ports.add(new RdmaPort(device.getFileName().toString(), number, state,
                        value(port.resolve("link_layer")), gbps, rate));
            }
        }
        return ports;
    }

    private static List<Path> children(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> list = Files.list(dir)) {
            return list.sorted(Comparator.comparing(p -> p.getFileName().toString())).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static String value(Path file) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            String text = new String(bytes, 0, Math.min(bytes.length, 256), StandardCharsets.UTF_8).strip();
            return text.isEmpty() || text.chars().anyMatch(c -> c < 0x20) ? "unknown" : text;
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
