package dev.gpucloud.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The CLI's side of billing's REST API (docs/api.md, "Billing REST API"): a POST with the profile's bearer token and
 * a JSON answer. A refusal becomes one line with billing's own message, naming the parameter it named; billing out
 * of reach says where it was looked for.
 */
final class BillingApi {

    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What went wrong, in one line that the CLI prints as it is (exit 1). */
    static final class Failure extends RuntimeException {
        Failure(String message) {
            super(message, null, false, false);
        }
    }

    /** A 2xx answer: its status and JSON body, as parsed and as sent. */
    record Answer(int status, JsonNode body, String text) {
    }

    private final HttpClient http;
    private final URI base;
    private final Optional<String> token;

    BillingApi(HttpClient http, URI base, Optional<String> token) {
        this.http = http;
        this.base = base;
        this.token = token;
    }

    /** Billing's base URL, checked: http or https, with a host, nothing after the path. */
    static URI baseUri(String url) {
        String text = url == null ? "" : url.strip().replaceAll("/+$", "");
        try {
            URI uri = new URI(text);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null && uri.getQuery() == null
                    && uri.getFragment() == null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // said below
        }
        throw new IllegalArgumentException("--billing must be billing's http(s) URL, e.g. https://localhost:8082, was '"
                + text + "'");
    }

    /**
     * POSTs {@code body} (JSON, or nothing) to {@code path} with {@code headers}; returns a 2xx answer, else fails
     * with billing's message. {@code unsure} is added to a failure after which the call may have taken effect.
     */
    Answer post(String path, Map<String, String> headers, String body, String unsure) {
        URI url = URI.create(base + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json")
                .POST(body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        headers.forEach(request::header);
        return exchange(request, unsure);
    }

    /** GETs {@code path}; returns a 2xx answer, else fails with billing's message. */
    Answer get(String path) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json").GET();
        return exchange(request, "");
    }

    private Answer exchange(HttpRequest.Builder request, String unsure) {
        token.ifPresent(t -> request.header("Authorization", "Bearer " + t));
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (ConnectException e) {
            // the JDK's client gives a refused connection no message
            String why = e.getMessage() == null || e.getMessage().isBlank() ? "connection refused" : reason(e);
            throw new Failure("cannot reach billing at " + base + " (" + why + "); start the stack with"
                    + " ./gpucloud up, or point --billing (env GPUCLOUD_BILLING) at a running one");
        } catch (HttpTimeoutException e) {
            throw new Failure("billing at " + base + " did not answer within " + REQUEST_TIMEOUT.toSeconds() + " s"
                    + unsure);
        } catch (IOException e) {
            throw new Failure("the call to billing at " + base + " failed (" + reason(e) + ")" + unsure);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted while waiting for billing" + unsure);
        }
        JsonNode json = null;
        try {
            json = response.body() == null || response.body().isBlank() ? null : JSON.readTree(response.body());
        } catch (IOException e) {
            // said below, where it matters
        }
        int status = response.statusCode();
        if (status >= 200 && status < 300 && json != null && json.isObject()) {
            return new Answer(status, json, response.body());
        }
        if (json != null && json.hasNonNull("message")) {
            String parameter = json.hasNonNull("parameter") ? " (" + json.get("parameter").asText() + ")" : "";
            throw new Failure("billing refused it, HTTP " + status + parameter + ": "
                    + GpucloudCli.firstLine(json.get("message").asText()) + (status >= 500 ? unsure : ""));
        }
        throw new Failure("billing at " + base + " answered HTTP " + status + " without a JSON body"
                + (status >= 500 ? unsure : "") + ": is --billing (env GPUCLOUD_BILLING) billing's address?");
    }

    private static String reason(Exception e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : GpucloudCli.firstLine(message);
    }
}
