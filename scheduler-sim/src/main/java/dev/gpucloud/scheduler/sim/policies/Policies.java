package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.Policy;
import java.util.List;
import java.util.Locale;

/** The job policies by name, as the CLI names them. */
public final class Policies {

    public static final List<String> NAMES = List.of("fifo", "srtf", "srsf", "tiresias", "fine-las", "gittins",
            "production");

    private Policies() {
    }

    public static Policy byName(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "fifo" -> new Fifo();
            case "srtf" -> Srtf.srtf();
            case "srsf" -> Srtf.srsf();
            case "tiresias" -> new Tiresias();
            case "fine-las" -> new FineLas();
            case "production" -> new Production();
            case "gittins" -> new Gittins();
            default -> throw new IllegalArgumentException("unknown policy '" + name + "' (known: "
                    + String.join(", ", NAMES) + ")");
        };
    }
}
