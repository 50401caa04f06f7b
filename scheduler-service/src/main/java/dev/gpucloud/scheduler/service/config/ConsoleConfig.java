package dev.gpucloud.scheduler.service.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** The web console's settings, under {@code gpucloud.console} (docs/console.md, "Settings"). */
@ConfigMapping(prefix = "gpucloud.console")
public interface ConsoleConfig {

    /** Whether {@code /console} is served at all; off, every console path is 404. */
    @WithDefault("true")
    boolean enabled();

    /** Billing's REST API, where the tenant page reads this month's cost with the user's own token. */
    @WithDefault("http://localhost:8082")
    String billingUrl();

    /** A PEM file of the CA that billing's certificate comes from (the stack's); unset: the JVM's CAs. */
    Optional<String> billingCa();

    /** How long the tenant page waits for billing before it says the cost is unavailable. */
    @WithDefault("2s")
    Duration billingTimeout();

    /** Jobs a page of the jobs list shows unless it asks for another size (at most the API's max page size). */
    @WithDefault("50")
    int pageSize();
}
