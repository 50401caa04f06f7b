package dev.gpucloud.agent.cloud;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A local stand-in for a cloud's metadata service: answers scripted per "METHOD path" (query
 * string included), checks required headers, and can hang or answer HTML.
 */
public final class FakeMetadataServer implements AutoCloseable {

    public record Reply(int status, String contentType, String body, long delayMillis) {
        public static Reply text(String body) {
            return new Reply(200, "text/plain", body, 0);
        }

        public static Reply json(String body) {
            return new Reply(200, "application/json", body, 0);
        }
    }

    private final HttpServer server;
    private final Map<String, Reply> replies = new ConcurrentHashMap<>();
    private final Map<String, String> requiredHeaders = new ConcurrentHashMap<>();
    public final List<String> requests = new CopyOnWriteArrayList<>();
    public volatile String awsToken = "token-1";

    public FakeMetadataServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", this::handle);
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public FakeMetadataServer reply(String methodAndPath, Reply reply) {
        replies.put(methodAndPath, reply);
        return this;
    }

    public FakeMetadataServer require(String header, String value) {
        requiredHeaders.put(header, value);
        return this;
    }

    /** Answers like AWS IMDSv2: a token for a PUT with a TTL, 401 for a GET without the current token. */
    public FakeMetadataServer aws() {
        reply("PUT /latest/api/token", Reply.text("token-1"));
        return this;
    }

    private void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getRawPath()
                + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery());
        String key = exchange.getRequestMethod() + " " + path;
        requests.add(key);
        try (exchange) {
            for (Map.Entry<String, String> required : requiredHeaders.entrySet()) {
                if (!required.getValue().equals(exchange.getRequestHeaders().getFirst(required.getKey()))) {
                    send(exchange, new Reply(400, "text/plain", "missing header " + required.getKey(), 0));
                    return;
                }
            }
            if (key.equals("PUT /latest/api/token")) {
                if (exchange.getRequestHeaders().getFirst("X-aws-ec2-metadata-token-ttl-seconds") == null) {
                    send(exchange, new Reply(400, "text/plain", "missing ttl", 0));
                } else {
                    send(exchange, Reply.text(awsToken));
                }
                return;
            }
            if (path.startsWith("/latest/meta-data/")
                    && !awsToken.equals(exchange.getRequestHeaders().getFirst("X-aws-ec2-metadata-token"))) {
                send(exchange, new Reply(401, "text/plain", "", 0));
                return;
            }
            Reply reply = replies.get(key);
            send(exchange, reply != null ? reply : new Reply(404, "text/html",
                    "<?xml version=\"1.0\"?><html><body>404 - Not Found</body></html>", 0));
        }
    }

    private static void send(HttpExchange exchange, Reply reply) throws IOException {
        if (reply.delayMillis() > 0) {
            try {
                Thread.sleep(reply.delayMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", reply.contentType());
        exchange.sendResponseHeaders(reply.status(), body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            exchange.getResponseBody().write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
