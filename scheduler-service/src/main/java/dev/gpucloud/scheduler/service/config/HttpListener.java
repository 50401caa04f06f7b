package dev.gpucloud.scheduler.service.config;

import dev.gpucloud.contracts.http.HttpHygiene;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * This service's HTTP listener gets gpucloud's hygiene filter: read-only endpoints, the request-read deadline, and
 * the scrape token on /q/metrics where one is configured.
 */
@ApplicationScoped
public class HttpListener {

    void install(@Observes Router router, Vertx vertx,
            @ConfigProperty(name = "gpucloud.http.request-read-deadline", defaultValue = "10s") Duration deadline,
            @ConfigProperty(name = "gpucloud.http.scrape-token-file") java.util.Optional<String> scrapeTokenFile) {
        HttpHygiene.install(router, vertx, deadline, scrapeTokenFile);
    }
}
