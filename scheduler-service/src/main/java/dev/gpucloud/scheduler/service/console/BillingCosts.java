package dev.gpucloud.scheduler.service.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.contracts.http.PemTrust;
import dev.gpucloud.scheduler.service.config.ConsoleConfig;
import io.quarkus.qute.TemplateData;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * This month's cost so far, from billing-service's {@code GET /invoices/{tenant}/current}, asked with the user's own
 * token so that billing applies its own rules to who may read what. Billing out of reach, slow or refusing is not an
 * error of the page: the answer says the cost is unavailable, and why.
 */
@ApplicationScoped
public class BillingCosts {

    private static final Logger LOG = Logger.getLogger(BillingCosts.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The cost, or why there is none to show ({@code unavailable} non-null). */
    @TemplateData
    public record Cost(String month, String total, String currency, long seconds, String asOf, String unavailable) {
        static Cost unavailable(String why) {
            return new Cost("", "", "", 0, "", why);
        }
    }

    private final URI base;
    private final Duration timeout;
    private final HttpClient http;

    public BillingCosts(ConsoleConfig config) {
        this.base = URI.create(config.billingUrl().replaceAll("/+$", "") + "/");
        this.timeout = config.billingTimeout();
        HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(timeout);
        if (config.billingCa().isPresent() && !config.billingCa().get().isBlank()) {
            try {
                b.sslContext(PemTrust.sslContext(Path.of(config.billingCa().get())));
            } catch (IOException e) {
                throw new IllegalStateException("gpucloud.console.billing-ca: cannot read a PEM CA from "
                        + config.billingCa().get() + " (" + e.getMessage() + ")", e);
            }
        }
        this.http = b.build();
    }

    /** What {@code tenant}'s month in progress costs so far, as billing answers {@code token}'s bearer. */
    public Uni<Cost> current(String tenant, String token) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("invoices/"
                        + URLEncoder.encode(tenant, StandardCharsets.UTF_8) + "/current"))
                .timeout(timeout).header("Accept", "application/json").GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return Uni.createFrom().completionStage(() -> http.sendAsync(request.build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)))
                .map(BillingCosts::read)
                .onFailure().recoverWithItem(failure -> {
                    LOG.infof("the console could not read %s's cost from billing at %s: %s", tenant, base, failure);
                    return Cost.unavailable("billing cannot be reached just now (" + base + ")");
                });
    }

    private static Cost read(HttpResponse<String> response) {
        try {
            JsonNode body = JSON.readTree(response.body());
            if (response.statusCode() != 200) {
                String said = body != null && body.hasNonNull("message") ? body.get("message").asText() : "";
                return Cost.unavailable("billing answered " + response.statusCode() + (said.isEmpty() ? "" : ": "
                        + dev.gpucloud.contracts.limits.Check.clip(said)));
            }
            return new Cost(body.path("month").asText(), body.path("total").asText(), "USD",
                    body.path("seconds").asLong(), body.path("asOf").asText(), null);
        } catch (IOException | RuntimeException e) {
            return Cost.unavailable("billing answered " + response.statusCode() + " with a body that is not its JSON");
        }
    }
}
