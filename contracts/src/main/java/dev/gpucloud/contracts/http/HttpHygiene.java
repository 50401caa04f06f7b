package dev.gpucloud.contracts.http;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Logger;

/**
 * What every gpucloud HTTP listener does before any route: read-only endpoints ({@code /q/metrics},
 * {@code /q/health} and below) answer only GET and HEAD (405 with {@code Allow} otherwise), and a request
 * whose body has not fully arrived within the request-read deadline loses its connection, so a client that
 * starts a POST and never finishes it cannot hold the connection (the Vert.x idle timeout, set per service in
 * {@code quarkus.http.idle-timeout}, only cuts a silent one). Where a scrape token is configured, {@code /q/metrics}
 * answers only the scraper that sends it. Each service installs it from a Router observer.
 */
public final class HttpHygiene {

    private static final Logger LOG = Logger.getLogger(HttpHygiene.class.getName());
    private static final Set<HttpMethod> READ = Set.of(HttpMethod.GET, HttpMethod.HEAD);

    private HttpHygiene() {
    }

    /** Installs the filter as the router's first route; {@code /q/metrics} stays open to anyone. */
    public static void install(Router router, Vertx vertx, Duration requestReadDeadline) {
        install(router, vertx, requestReadDeadline, Optional.empty());
    }

    /**
     * Installs the filter as the router's first route. With {@code scrapeTokenFile} (a file holding one token,
     * what Prometheus sends with {@code authorization: {credentials_file: ...}}), {@code /q/metrics} answers only
     * a request that carries {@code Authorization: Bearer <that token>}, and any other 401; unset (or blank), it
     * is open, and the service says so once.
     *
     * @throws IllegalArgumentException naming the file when it cannot be read or holds no token
     */
    public static void install(Router router, Vertx vertx, Duration requestReadDeadline,
            Optional<String> scrapeTokenFile) {
        long deadline = Math.max(1, requestReadDeadline.toMillis());
        byte[] token = scrapeTokenFile.filter(f -> !f.isBlank()).map(HttpHygiene::readToken).orElse(null);
        if (token == null) {
            LOG.warning("/q/metrics is open to anyone who reaches this port (no gpucloud.http.scrape-token-file)");
        }
        router.route().order(Integer.MIN_VALUE).handler(rc -> filter(rc, vertx, deadline, token));
    }

    private static byte[] readToken(String file) {
        String token;
        try {
            token = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the scrape token file " + file + ": " + e.getMessage(), e);
        }
        if (token.isEmpty() || token.length() > 4096 || token.chars().anyMatch(c -> c <= ' ' || c > '~')) {
            throw new IllegalArgumentException("the scrape token file " + file + " must hold one token of 1..4096"
                    + " printable ASCII characters");
        }
        return token.getBytes(StandardCharsets.US_ASCII);
    }

    /** Whether {@code authorization} is {@code Bearer <token>}, compared in constant time. */
    static boolean carries(String authorization, byte[] token) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return MessageDigest.isEqual(authorization.substring(7).strip().getBytes(StandardCharsets.US_ASCII), token);
    }

    private static boolean isMetrics(String path) {
        return path != null && (path.equals("/q/metrics") || path.startsWith("/q/metrics/"));
    }

    /** Whether a path is one of the read-only endpoints. */
    public static boolean isReadOnly(String path) {
        return path != null && (path.equals("/q/metrics") || path.startsWith("/q/metrics/")
                || path.equals("/q/health") || path.startsWith("/q/health/"));
    }

    private static void filter(RoutingContext rc, Vertx vertx, long deadline, byte[] scrapeToken) {
        HttpServerRequest request = rc.request();
        if (isReadOnly(rc.normalizedPath()) && !READ.contains(request.method())) {
            rc.response().setStatusCode(405).putHeader("Allow", "GET, HEAD").end();
            return;
        }
        if (scrapeToken != null && isMetrics(rc.normalizedPath())
                && !carries(request.getHeader("Authorization"), scrapeToken)) {
            rc.response().setStatusCode(401).putHeader("WWW-Authenticate", "Bearer realm=\"gpucloud-metrics\"")
                    .putHeader("Content-Type", "application/json")
                    .end("{\"status\":401,\"error\":\"/q/metrics takes the scrape token: send 'Authorization: Bearer"
                            + " <token>' with the token of the file gpucloud.http.scrape-token-file names (./gpucloud up:"
                            + " .run/auth/scrape.token; Prometheus: authorization.credentials_file)\"}");
            return;
        }
        if (!request.isEnded()) {
            long timer = vertx.setTimer(deadline, id -> {
                // a handler still answering (a stream of events: over HTTP/2 a GET nobody reads stays "not ended"
                // while the router holds it paused) decided without the body; one that answered and ended (a 404)
                // must not let the client keep trickling it in
                boolean streaming = rc.response().headWritten() && !rc.response().ended();
                if (!request.isEnded() && !streaming) {
                    LOG.warning(() -> "closing the connection of " + request.remoteAddress() + ": its " + request.method()
                            + " request body did not arrive within " + deadline + " ms");
                    request.connection().close();
                }
            });
            // answered before its body arrived (a 405, a 404) does not let a client keep trickling it in
            rc.addEndHandler(ignored -> {
                if (request.isEnded()) {
                    vertx.cancelTimer(timer);
                }
            });
        }
        rc.next();
    }
}
