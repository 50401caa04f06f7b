package dev.gpucloud.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Billing's REST endpoints in the JDK's own HTTP server, answering what a test scripts, and recording every request
 * as it arrived: method, path, the headers the API reads and the body. What billing itself answers to the same
 * commands is tested against the real service in billing-service ({@code CliAgainstBillingTest}).
 */
final class FakeBilling implements AutoCloseable {

    record Request(String method, String path, String authorization, String idempotencyKey, String contentType,
            String body) {
    }

    final HttpServer server;
    final String base;
    final List<Request> requests = new CopyOnWriteArrayList<>();
    volatile int status = 200;
    volatile String answer = "{}";

    FakeBilling() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        base = "http://127.0.0.1:" + server.getAddress().getPort();
        server.createContext("/", exchange -> {
            requests.add(new Request(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(),
                    exchange.getRequestHeaders().getFirst("Authorization"),
                    exchange.getRequestHeaders().getFirst("Idempotency-Key"),
                    exchange.getRequestHeaders().getFirst("Content-Type"),
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
            answer(exchange, status, answer);
        });
        server.start();
    }

    /** Answers {@code body} with {@code status} from now on. */
    FakeBilling answering(int status, String body) {
        this.status = status;
        this.answer = body;
        return this;
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
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
