package dev.gpucloud.contracts.http;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.Set;
import java.util.logging.Logger;

/**
 * What every gpucloud HTTP listener does before any route: read-only endpoints ({@code /q/metrics},
 * {@code /q/health} and below) answer only GET and HEAD (405 with {@code Allow} otherwise), and a request
 * whose body has not fully arrived within the request-read deadline loses its connection, so a client that
 * starts a POST and never finishes it cannot hold the connection (the Vert.x idle timeout, set per service in
 * {@code quarkus.http.idle-timeout}, only cuts a silent one). Each service installs it from a Router observer.
 */
public final class HttpHygiene {

    private static final Logger LOG = Logger.getLogger(HttpHygiene.class.getName());
    private static final Set<HttpMethod> READ = Set.of(HttpMethod.GET, HttpMethod.HEAD);

    private HttpHygiene() {
    }

    /** Installs the filter as the router's first route. */
    public static void install(Router router, Vertx vertx, Duration requestReadDeadline) {
        long deadline = Math.max(1, requestReadDeadline.toMillis());
        router.route().order(Integer.MIN_VALUE).handler(rc -> filter(rc, vertx, deadline));
    }

    /** Whether a path is one of the read-only endpoints. */
    public static boolean isReadOnly(String path) {
        return path != null && (path.equals("/q/metrics") || path.startsWith("/q/metrics/")
                || path.equals("/q/health") || path.startsWith("/q/health/"));
    }

    private static void filter(RoutingContext rc, Vertx vertx, long deadline) {
        HttpServerRequest request = rc.request();
        if (isReadOnly(rc.normalizedPath()) && !READ.contains(request.method())) {
            rc.response().setStatusCode(405).putHeader("Allow", "GET, HEAD").end();
            return;
        }
        if (!request.isEnded()) {
            long timer = vertx.setTimer(deadline, id -> {
                if (!request.isEnded()) {
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
