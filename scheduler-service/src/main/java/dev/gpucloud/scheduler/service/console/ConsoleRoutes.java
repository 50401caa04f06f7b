package dev.gpucloud.scheduler.service.console;

import dev.gpucloud.scheduler.service.config.ConsoleConfig;
import dev.gpucloud.scheduler.service.grpc.Authentication;
import dev.gpucloud.scheduler.service.grpc.GrpcErrors;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The web console for users (docs/console.md), under {@code /console} on the scheduler's own port: server-rendered
 * pages of the caller's jobs, one job with its live output, and the tenant's quota and cost. It signs in with the
 * same bearer tokens as the API, verified by the same code ({@link Authentication#verify}), and shows only what the
 * API would answer the same token. A request without a valid session goes to the login page; bad input is a 400
 * page that says what was wrong; nothing ever shows a stack trace.
 */
@ApplicationScoped
public class ConsoleRoutes {

    private static final Logger LOG = Logger.getLogger(ConsoleRoutes.class);
    /** What the login page says after a redirect; the query names one of these, never free text. */
    static final Map<String, String> LOGIN_MESSAGES = Map.of(
            "signin", "Sign in to see your jobs.",
            "expired", "Your session has ended (its token expired or is no longer valid): sign in again.",
            "out", "You have logged out.");
    private static final Map<String, String> ASSETS = Map.of(
            "console.css", "text/css; charset=utf-8",
            "console.js", "text/javascript; charset=utf-8",
            "login.js", "text/javascript; charset=utf-8");

    private final ConsoleConfig config;
    private final Authentication authentication;
    private final ConsolePages pages;
    private final LiveOutput live;
    private final Vertx vertx;
    private final Map<String, byte[]> assets = new java.util.concurrent.ConcurrentHashMap<>();

    public ConsoleRoutes(ConsoleConfig config, Authentication authentication, ConsolePages pages, LiveOutput live,
            Vertx vertx) {
        this.config = config;
        this.authentication = authentication;
        this.pages = pages;
        this.live = live;
        this.vertx = vertx;
    }

    void install(@Observes Router router) {
        if (!config.enabled()) {
            return;
        }
        router.get("/console").handler(ctx -> redirect(ctx, "/console/jobs"));
        router.get("/console/").handler(ctx -> redirect(ctx, "/console/jobs"));
        router.get("/console/static/:file").handler(this::asset);
        router.get("/console/login").handler(ctx -> respond(ctx, login(200,
                LOGIN_MESSAGES.getOrDefault(String.valueOf(ctx.request().getParam("m")), ""), "")));
        router.post("/console/session").handler(BodyHandler.create().setBodyLimit(16 * 1024)
                .setHandleFileUploads(false)).handler(this::session);
        router.post("/console/logout").handler(this::logout);
        router.get("/console/jobs").handler(ctx -> signedIn(ctx, s -> pages.jobs(s, params(ctx))));
        router.get("/console/jobs/:id").handler(ctx -> signedIn(ctx, s -> pages.job(s, ctx.pathParam("id"),
                params(ctx))));
        router.get("/console/jobs/:id/logs").handler(ctx -> signedIn(ctx, s -> live.stream(s, ctx.pathParam("id"),
                params(ctx), ctx.response(), Vertx.currentContext())));
        router.get("/console/tenant").handler(ctx -> signedIn(ctx, s -> pages.tenant(s, params(ctx))));
        router.route("/console/*").handler(ctx -> respond(ctx, error(404, "Not found",
                "The console has no page at this address.", "")));
    }

    /** {@code POST /console/session} (token=JWT): verifies the token and, if it passes, starts a session with it. */
    private void session(RoutingContext ctx) {
        if (!ConsoleSession.sameOrigin(ctx.request())) {
            respond(ctx, error(403, "Refused", "A sign-in must come from the console's own login page.", ""));
            return;
        }
        String token = ctx.request().getFormAttribute("token");
        token = token == null ? "" : token.strip();
        if (token.regionMatches(true, 0, "Bearer ", 0, 7)) {
            token = token.substring(7).strip();
        }
        if (token.isEmpty()) {
            respond(ctx, login(400, "", "Paste a token: the one `gpucloud login` stored, or use `gpucloud console`."));
            return;
        }
        if (token.length() > ConsoleSession.MAX_TOKEN_CHARS) {
            respond(ctx, login(400, "", "The token is " + token.length() + " characters, more than a browser keeps"
                    + " in a cookie (" + ConsoleSession.MAX_TOKEN_CHARS + ")."));
            return;
        }
        String given = token;
        boolean tls = ctx.request().isSSL();
        onSafeContext(() -> authentication.verify(given)).subscribe().with(verified -> {
            ConsoleSession.start(ctx.response(), tls, given, verified.expires());
            LOG.infof("console session started for %s", verified.caller().describe());
            redirect(ctx, "/console/jobs");
        }, failure -> respond(ctx, login(401, "", "That token does not sign in: "
                + Authentication.why(failure) + ".")));
    }

    private void logout(RoutingContext ctx) {
        if (!ConsoleSession.sameOrigin(ctx.request())) {
            respond(ctx, error(403, "Refused", "A log-out must come from a console page.", ""));
            return;
        }
        ConsoleSession.end(ctx.response(), ctx.request().isSSL());
        redirect(ctx, "/console/login?m=out");
    }

    /**
     * Serves a page to a signed-in caller: the session's token is verified again, as every API call's is; without a
     * session, or with one whose token no longer passes, the browser goes to the login page (and the cookie is
     * dropped). A page's failure becomes an error page with the API's status and message.
     */
    private void signedIn(RoutingContext ctx, Function<ConsolePages.Session, Uni<ConsolePages.Page>> page) {
        String token = ConsoleSession.token(ctx.request());
        boolean tls = ctx.request().isSSL();
        if (authentication.enabled() && (token == null || token.length() > ConsoleSession.MAX_TOKEN_CHARS)) {
            redirect(ctx, "/console/login?m=signin");
            return;
        }
        onSafeContext(() -> authentication.verify(token == null ? "" : token)).subscribe().with(verified -> {
            // the page reads the database on a context of its own (the live output's reader reads on it too)
            onSafeContext(() -> page.apply(new ConsolePages.Session(verified.caller(), token))).subscribe().with(p -> {
                if (p != null) {
                    respond(ctx, p);
                }
            }, failure -> respond(ctx, failed(failure)));
        }, failure -> {
            ConsoleSession.end(ctx.response(), tls);
            redirect(ctx, "/console/login?m=expired");
        });
    }

    /** Runs {@code work} on a fresh duplicated Vert.x context marked safe, as Hibernate Reactive requires. */
    private <T> Uni<T> onSafeContext(java.util.function.Supplier<Uni<T>> work) {
        Context context = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
        VertxContextSafetyToggle.setContextSafe(context, true);
        return Uni.createFrom().emitter(emitter -> context.runOnContext(v -> {
            Uni<T> uni;
            try {
                uni = work.get();
            } catch (RuntimeException e) {
                emitter.fail(e);
                return;
            }
            uni.subscribe().with(emitter::complete, emitter::fail);
        }));
    }

    /** The API's status for a failure, as a page: 400 bad input, 403, 404 (also another tenant's job), 503, 500. */
    ConsolePages.Page failed(Throwable failure) {
        io.grpc.Status status = GrpcErrors.toStatus(failure).getStatus();
        String said = status.getDescription() == null ? "" : status.getDescription();
        return switch (status.getCode()) {
            case INVALID_ARGUMENT -> error(400, "Bad request", said, "");
            case NOT_FOUND -> error(404, "Not found", said, "");
            case PERMISSION_DENIED -> error(403, "Not allowed", said, "");
            case UNAVAILABLE -> error(503, "Unavailable", said, "Retry in a moment.");
            case RESOURCE_EXHAUSTED -> error(429, "Busy", said, "Retry in a moment.");
            default -> error(500, "Internal error", "Something went wrong; the scheduler's log says what.", "");
        };
    }

    ConsolePages.Page error(int status, String title, String message, String hint) {
        return new ConsolePages.Page(status, pages.template("error").data("who", "").data("status", status)
                .data("title", title).data("message", message).data("hint", hint).render());
    }

    private ConsolePages.Page login(int status, String message, String problem) {
        return new ConsolePages.Page(status, pages.template("login").data("who", "").data("message", message)
                .data("problem", problem).render());
    }

    private static MultiMap params(RoutingContext ctx) {
        return ctx.queryParams(); // a query that is not valid percent-encoding fails here, answered 400 by Vert.x
    }

    private static void respond(RoutingContext ctx, ConsolePages.Page page) {
        HttpServerResponse response = ctx.response();
        if (response.ended() || response.closed()) {
            return;
        }
        if (response.headWritten()) { // a stream that had begun: nothing more can be said on it
            response.end();
            return;
        }
        ConsoleSession.secure(response, false);
        response.setStatusCode(page.status()).putHeader("Content-Type", "text/html; charset=utf-8").end(page.html());
    }

    private static void redirect(RoutingContext ctx, String to) {
        HttpServerResponse response = ctx.response();
        ConsoleSession.secure(response, false);
        response.setStatusCode(303).putHeader("Location", to).end();
    }

    private void asset(RoutingContext ctx) {
        String file = ctx.pathParam("file");
        String type = ASSETS.get(file);
        if (type == null) {
            respond(ctx, error(404, "Not found", "The console has no such file.", ""));
            return;
        }
        byte[] body = assets.computeIfAbsent(file, ConsoleRoutes::read);
        HttpServerResponse response = ctx.response();
        ConsoleSession.secure(response, true);
        response.putHeader("Content-Type", type).end(io.vertx.core.buffer.Buffer.buffer(body));
    }

    private static byte[] read(String file) {
        try (InputStream in = ConsoleRoutes.class.getResourceAsStream("/console/" + file)) {
            if (in == null) {
                throw new IllegalStateException("the console's " + file + " is missing from the build");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
