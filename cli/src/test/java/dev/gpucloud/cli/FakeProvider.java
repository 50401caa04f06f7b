package dev.gpucloud.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLContext;

/**
 * An OIDC provider's endpoints in the JDK's own HTTP server, answering as a test scripts them: the discovery
 * document, the device authorization endpoint, and a token endpoint that plays its answers in order (the last
 * one again and again). It records every form it was sent.
 */
final class FakeProvider implements AutoCloseable {

    record Answer(int status, String body) {
    }

    final HttpServer server;
    final String base;
    volatile int discoveryStatus = 200;
    volatile String discovery;
    volatile int deviceStatus = 200;
    volatile String device = """
            {"device_code":"dev-123","user_code":"ABCD-EFGH","verification_uri":"%s/device",
             "verification_uri_complete":"%s/device?user_code=ABCD-EFGH","expires_in":600,"interval":1}""";
    private final Deque<Answer> tokenAnswers = new ArrayDeque<>();
    final List<Map<String, String>> deviceRequests = new CopyOnWriteArrayList<>();
    final List<Map<String, String>> tokenRequests = new CopyOnWriteArrayList<>();
    final List<Map<String, String>> revocations = new CopyOnWriteArrayList<>();
    volatile int revocationStatus = 200;

    FakeProvider() throws IOException {
        this(null);
    }

    /** Over TLS with {@code tls}'s key, at https://localhost:PORT; over plain HTTP without. */
    FakeProvider(SSLContext tls) throws IOException {
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        if (tls != null) {
            HttpsServer https = HttpsServer.create(loopback, 0);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            server = https;
        } else {
            server = HttpServer.create(loopback, 0);
        }
        base = (tls != null ? "https://localhost:" : "http://127.0.0.1:") + server.getAddress().getPort()
                + "/realms/test";
        discovery = """
                {"issuer":"%s","device_authorization_endpoint":"%s/device/auth","token_endpoint":"%s/token",
                 "revocation_endpoint":"%s/revoke"}"""
                .formatted(base, base, base, base);
        device = device.formatted(base, base);
        server.createContext("/realms/test/.well-known/openid-configuration",
                exchange -> answer(exchange, discoveryStatus, discovery));
        server.createContext("/realms/test/device/auth", exchange -> {
            deviceRequests.add(form(exchange));
            answer(exchange, deviceStatus, device);
        });
        server.createContext("/realms/test/revoke", exchange -> {
            revocations.add(form(exchange));
            answer(exchange, revocationStatus, revocationStatus == 200 ? "" : "{\"error\":\"unsupported_token_type\"}");
        });
        server.createContext("/realms/test/token", exchange -> {
            tokenRequests.add(form(exchange));
            Answer next;
            synchronized (tokenAnswers) {
                next = tokenAnswers.size() > 1 ? tokenAnswers.poll() : tokenAnswers.peek();
            }
            answer(exchange, next == null ? 500 : next.status(), next == null ? "no answer scripted" : next.body());
        });
        server.start();
    }

    String issuer() {
        return base;
    }

    /** The token endpoint's next answers, in order. */
    FakeProvider token(int status, String body) {
        synchronized (tokenAnswers) {
            tokenAnswers.add(new Answer(status, body));
        }
        return this;
    }

    /** Forgets the scripted answers and the forms received. */
    FakeProvider reset() {
        synchronized (tokenAnswers) {
            tokenAnswers.clear();
        }
        tokenRequests.clear();
        deviceRequests.clear();
        return this;
    }

    FakeProvider pending() {
        return token(400, "{\"error\":\"authorization_pending\"}");
    }

    FakeProvider error(String code) {
        return token(400, "{\"error\":\"" + code + "\",\"error_description\":\"as the test says\"}");
    }

    FakeProvider tokens(String access, String refresh) {
        return token(200, "{\"access_token\":\"" + access + "\",\"token_type\":\"Bearer\",\"expires_in\":300"
                + (refresh == null ? "" : ",\"refresh_token\":\"" + refresh + "\"") + "}");
    }

    /** A JWT-shaped token with these claims (unsigned: the CLI only reads it). */
    static String jwt(String user, String tenant, long exp) {
        String claims = "{\"sub\":\"" + user + "-id\",\"preferred_username\":\"" + user + "\",\"gpucloud_tenants\":[\""
                + tenant + "\"],\"groups\":[\"member\"],\"exp\":" + exp + "}";
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claims.getBytes(StandardCharsets.UTF_8)) + ".c2ln";
    }

    private static Map<String, String> form(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Map<String, String> form = new LinkedHashMap<>();
        form.put(":content-type", String.valueOf(exchange.getRequestHeaders().getFirst("Content-Type")));
        for (String pair : body.split("&")) {
            if (!pair.isEmpty()) {
                String[] kv = pair.split("=", 2);
                form.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8),
                        kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
            }
        }
        return form;
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", body.startsWith("{") ? "application/json" : "text/html");
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            exchange.getResponseBody().write(bytes);
        }
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
