package dev.gpucloud.agent.cloud;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;

/**
 * A small HTTP client for metadata services: every request has a timeout, and every failure becomes
 * a {@link MetadataException} that names the URL and what went wrong.
 */
final class MetadataClient {

    /** An answer: status and body (at most 64 KiB is read into a message). */
    record Answer(int status, String body, String contentType) {
    }

    private final HttpClient http;
    private final Duration timeout;

    MetadataClient(Duration timeout) {
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    Answer get(String url, Map<String, String> headers) throws MetadataException {
        return call("GET", url, headers);
    }

    Answer put(String url, Map<String, String> headers) throws MetadataException {
        return call("PUT", url, headers);
    }

    private Answer call(String method, String url, Map<String, String> headers) throws MetadataException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                .method(method, HttpRequest.BodyPublishers.noBody());
        headers.forEach(request::header);
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            String body = response.body() == null ? "" : response.body();
            return new Answer(response.statusCode(), body, response.headers().firstValue("content-type").orElse(""));
        } catch (HttpTimeoutException e) {
            throw new MetadataException(method + " " + url + " timed out after " + timeout.toMillis() + " ms");
        } catch (IOException e) {
            throw new MetadataException(method + " " + url + " failed: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetadataException(method + " " + url + " interrupted");
        }
    }

    /** The first characters of an unexpected body, on one line, for a log message. */
    static String excerpt(String body) {
        String line = body.replaceAll("\\s+", " ").strip();
        return line.length() > 80 ? line.substring(0, 80) + "..." : line;
    }
}
