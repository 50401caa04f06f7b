package dev.gpucloud.scheduler.service.console;

import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.time.Duration;
import java.time.Instant;

/**
 * The console's session is the user's own bearer token in a cookie that scripts cannot read (HttpOnly), that no other
 * site's page sends (SameSite=Strict), that travels over TLS only where the console is served over TLS (Secure), and
 * that the browser drops when the token expires. Nothing else is kept: every request verifies the token again, as
 * every API call does, so a session ends with its token.
 */
final class ConsoleSession {

    /** The cookie's name. */
    static final String COOKIE = "gpucloud_console";
    /** Only the console's own paths get it. */
    static final String PATH = "/console";
    /**
     * Browsers keep cookies of up to 4096 bytes (name, value and attributes): a longer token cannot be a session, and
     * the login page says so rather than setting a cookie the browser would drop.
     */
    static final int MAX_TOKEN_CHARS = 3800;

    private ConsoleSession() {
    }

    /** The session's token, or null where the request has none. */
    static String token(HttpServerRequest request) {
        Cookie cookie = request.getCookie(COOKIE);
        if (cookie == null || cookie.getValue().isBlank()) {
            return null;
        }
        return cookie.getValue();
    }

    /** Starts a session holding {@code token} until {@code expires} (null: until the browser closes). */
    static void start(HttpServerResponse response, boolean tls, String token, Instant expires) {
        Cookie cookie = base(Cookie.cookie(COOKIE, token), tls);
        if (expires != null) {
            cookie.setMaxAge(Math.max(1, Duration.between(Instant.now(), expires).toSeconds()));
        }
        response.addCookie(cookie);
    }

    /** Ends the session: the browser drops the cookie. */
    static void end(HttpServerResponse response, boolean tls) {
        response.addCookie(base(Cookie.cookie(COOKIE, ""), tls).setMaxAge(0));
    }

    private static Cookie base(Cookie cookie, boolean tls) {
        return cookie.setPath(PATH).setHttpOnly(true).setSameSite(CookieSameSite.STRICT).setSecure(tls);
    }

    /**
     * Whether a state-changing request comes from a console page of this very origin: its {@code Origin} header (which
     * browsers send on every POST), else its {@code Referer}, must name the scheme, host and port it was sent to. A
     * request that names neither is refused too: the console's own pages always send one.
     */
    static boolean sameOrigin(HttpServerRequest request) {
        io.vertx.core.net.HostAndPort authority = request.authority(); // Host in HTTP/1.1, :authority in HTTP/2
        if (authority == null || authority.host() == null || authority.host().isBlank()) {
            return false;
        }
        String scheme = request.isSSL() ? "https" : "http";
        String origin = request.getHeader("Origin");
        if (origin == null) {
            origin = request.getHeader("Referer");
        }
        if (origin == null || origin.isBlank() || origin.strip().equals("null")) {
            return false;
        }
        try {
            java.net.URI uri = new java.net.URI(origin.strip());
            return scheme.equalsIgnoreCase(uri.getScheme()) && authority.host().equalsIgnoreCase(uri.getHost())
                    && port(scheme, authority.port()) == port(scheme, uri.getPort());
        } catch (java.net.URISyntaxException e) {
            return false;
        }
    }

    private static int port(String scheme, int port) {
        return port >= 0 ? port : scheme.equals("https") ? 443 : 80;
    }

    /**
     * What every console answer carries: a content security policy that runs only the console's own script and style
     * files (no inline script, no other origin, no framing), no MIME sniffing, no referrer to other sites, and, for a
     * page with data on it, no caching anywhere.
     */
    static void secure(HttpServerResponse response, boolean cacheable) {
        response.putHeader("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self';"
                + " connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
        response.putHeader("X-Content-Type-Options", "nosniff");
        response.putHeader("X-Frame-Options", "DENY");
        response.putHeader("Referrer-Policy", "same-origin");
        response.putHeader("Cache-Control", cacheable ? "public, max-age=300" : "no-store");
        if (!cacheable) {
            response.putHeader("Pragma", "no-cache");
        }
    }
}
