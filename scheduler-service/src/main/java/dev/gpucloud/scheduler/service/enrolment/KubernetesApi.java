package dev.gpucloud.scheduler.service.enrolment;

import dev.gpucloud.contracts.http.PemTrust;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The few calls the scheduler makes to the Kubernetes API server, with the JDK's HTTP client: as its own service
 * account (the token file is read again for every call, since the kubelet renews it), over TLS checked against the
 * cluster's CA alone. No Kubernetes client library: two verbs on two kinds of object do not need one.
 */
final class KubernetesApi {

    /** An answer: its status and its JSON body (empty where it had none, or none that parses). */
    record Reply(int status, JsonObject body) {

        /** The API server's own words for a failure ({@code Status.message}), or the status alone. */
        String message() {
            String said = body.getString("message");
            return said == null ? "HTTP " + status : "HTTP " + status + ": " + said;
        }
    }

    private final URI server;
    private final Path tokenFile;
    private final HttpClient http;

    /** A client of {@code server}; {@code caFile} is read (and required) for an https server only. */
    KubernetesApi(URI server, Path tokenFile, Path caFile) throws IOException {
        if (!"https".equals(server.getScheme()) && !"http".equals(server.getScheme())) {
            throw new IllegalArgumentException("the Kubernetes API server must be an https:// URL, is '" + server + "'");
        }
        this.server = server;
        this.tokenFile = tokenFile;
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if ("https".equals(server.getScheme())) {
            builder.sslContext(PemTrust.sslContext(caFile));
        }
        this.http = builder.build();
    }

    Reply get(String path) throws IOException {
        return send(request(path).GET());
    }

    Reply post(String path, JsonObject body) throws IOException {
        return send(request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode())));
    }

    private HttpRequest.Builder request(String path) throws IOException {
        String token;
        try {
            token = Files.readString(tokenFile, StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            throw new IOException("cannot read the scheduler's service account token " + tokenFile + ": " + e, e);
        }
        return HttpRequest.newBuilder(server.resolve(path)).timeout(Duration.ofSeconds(5))
                .header("Authorization", "Bearer " + token).header("Accept", "application/json");
    }

    private Reply send(HttpRequest.Builder request) throws IOException {
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while calling the Kubernetes API at " + server, e);
        }
        JsonObject body;
        try {
            body = response.body() == null || response.body().isBlank() ? new JsonObject()
                    : new JsonObject(response.body());
        } catch (DecodeException | ClassCastException e) {
            body = new JsonObject();
        }
        return new Reply(response.statusCode(), body);
    }
}
