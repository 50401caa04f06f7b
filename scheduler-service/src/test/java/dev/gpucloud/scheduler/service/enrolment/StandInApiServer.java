package dev.gpucloud.scheduler.service.enrolment;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Kubernetes API server as far as the scheduler uses one, on the JDK's HTTP server: POST creates (201) or answers
 * 409 AlreadyExists with a Status, GET answers the object or 404, a missing Role is 403 Forbidden with the API
 * server's message, a wrong token 401. A KafkaUser gets Strimzi's status condition Ready some time after it was
 * made (as the user operator reports it), or never. Every request is recorded.
 */
final class StandInApiServer {

    /** The scheduler's own service account token, which every call must carry. */
    static final String TOKEN = "eyJhbGciOiJSUzI1NiJ9.scheduler-service.token";

    record Request(String method, String path, String authorization, JsonObject body) {
    }

    private final HttpServer server;
    private final Map<String, JsonObject> objects = new ConcurrentHashMap<>();
    private final Map<String, Instant> made = new ConcurrentHashMap<>();
    final List<Request> requests = new CopyOnWriteArrayList<>();
    /** The GETs of KafkaUsers, and whether each answered Ready. */
    final List<Boolean> userReadsReady = new CopyOnWriteArrayList<>();
    volatile Duration readyAfter = Duration.ofSeconds(1);
    volatile boolean neverReady;
    volatile boolean forbidden;

    StandInApiServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 32);
        server.createContext("/", this::handle);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    void reset() {
        requests.clear();
        userReadsReady.clear();
        readyAfter = Duration.ofSeconds(1);
        neverReady = false;
        forbidden = false;
    }

    void stop() {
        server.stop(0);
    }

    /** The object stored at {@code path} ({@code /api/v1/namespaces/NS/secrets/NAME}, say), or null. */
    JsonObject object(String path) {
        return objects.get(path);
    }

    private void handle(HttpExchange ex) throws IOException {
        String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        requests.add(new Request(method, path, ex.getRequestHeaders().getFirst("Authorization"),
                body.isBlank() ? new JsonObject() : new JsonObject(body)));
        if (!("Bearer " + TOKEN).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
            answer(ex, 401, status(401, "Unauthorized", "Unauthorized"));
            return;
        }
        if (forbidden) {
            String resource = path.contains("/kafkausers") ? "kafkausers" : "secrets";
            answer(ex, 403, status(403, "Forbidden", resource + (resource.equals("secrets") ? "" : ".kafka.strimzi.io")
                    + " is forbidden: User \"system:serviceaccount:gpucloud:scheduler-service\" cannot "
                    + (method.equals("POST") ? "create" : "get") + " resource \"" + resource + "\" in API group \""
                    + (resource.equals("secrets") ? "" : "kafka.strimzi.io") + "\" in the namespace \"gpucloud\""));
            return;
        }
        if (method.equals("POST")) {
            JsonObject object = new JsonObject(body);
            String name = object.getJsonObject("metadata").getString("name");
            String at = path + "/" + name;
            if (objects.containsKey(at)) {
                answer(ex, 409, status(409, "AlreadyExists", "\"" + name + "\" already exists"));
                return;
            }
            object.getJsonObject("metadata").put("uid", UUID.randomUUID().toString())
                    .put("creationTimestamp", Instant.now().toString());
            objects.put(at, object);
            made.put(at, Instant.now());
            answer(ex, 201, object);
        } else if (method.equals("GET")) {
            JsonObject object = objects.get(path);
            if (object == null) {
                answer(ex, 404, status(404, "NotFound", "not found"));
                return;
            }
            object = object.copy();
            if (path.contains("/kafkausers/")) {
                boolean ready = !neverReady && made.get(path).plus(readyAfter).isBefore(Instant.now());
                userReadsReady.add(ready);
                object.put("status", new JsonObject().put("observedGeneration", 1).put("conditions", new JsonArray()
                        .add(new JsonObject().put("type", ready ? "Ready" : "NotReady").put("status", "True"))));
            }
            answer(ex, 200, object);
        } else {
            answer(ex, 405, status(405, "MethodNotAllowed", method));
        }
    }

    private static JsonObject status(int code, String reason, String message) {
        return new JsonObject().put("kind", "Status").put("apiVersion", "v1").put("metadata", new JsonObject())
                .put("status", "Failure").put("message", message).put("reason", reason).put("code", code);
    }

    private static void answer(HttpExchange ex, int status, JsonObject body) throws IOException {
        byte[] bytes = body.encode().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
        ex.close();
    }

    List<Request> requests(String method, String pathPart) {
        List<Request> found = new ArrayList<>();
        for (Request r : requests) {
            if (r.method().equals(method) && r.path().contains(pathPart)) {
                found.add(r);
            }
        }
        return found;
    }
}
