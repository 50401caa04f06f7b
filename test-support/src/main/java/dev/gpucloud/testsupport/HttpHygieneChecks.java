package dev.gpucloud.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What every gpucloud HTTP listener must do with slow and hostile clients, for each service's
 * {@code HttpHygieneTest} to inherit: read-only endpoints answer only GET and HEAD, a POST whose body never
 * finishes loses its connection, and (where the idle timeout is short) so does a client that drips a header
 * line every 5 s.
 */
public abstract class HttpHygieneChecks {

    @TestHTTPResource("/")
    protected URL url;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** Whether this listener's idle timeout is short enough to cut a client that drips headers every 5 s. */
    protected boolean cutsHeaderDrips() {
        return true;
    }

    @Test
    void read_only_endpoints_answer_only_get_and_head() throws Exception {
        assertThat(status("GET", "/q/metrics")).isEqualTo(200);
        assertThat(status("HEAD", "/q/health/live")).isEqualTo(200);
        for (String method : new String[] {"POST", "PUT", "DELETE", "TRACE", "PATCH"}) {
            for (String path : new String[] {"/q/metrics", "/q/health", "/q/health/ready", "/q/health/live"}) {
                HttpResponse<Void> response = send(method, path);
                assertThat(response.statusCode()).as(method + " " + path).isEqualTo(405);
                assertThat(response.headers().firstValue("Allow")).contains("GET, HEAD");
            }
        }
    }

    @Test
    void a_post_whose_body_never_finishes_loses_its_connection() throws Exception {
        assertThat(SlowClients.unfinishedBody(url, "/nothing-here", Duration.ofSeconds(60)))
                .isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void a_client_that_drips_one_header_line_every_5_s_is_cut_off() throws Exception {
        Assumptions.assumeTrue(cutsHeaderDrips(), "this listener keeps quiet connections open longer (see its idle timeout)");
        assertThat(SlowClients.dripHeaders(url, Duration.ofSeconds(5), Duration.ofSeconds(60)))
                .isLessThan(Duration.ofSeconds(15));
    }

    private int status(String method, String path) throws Exception {
        return send(method, path).statusCode();
    }

    private HttpResponse<Void> send(String method, String path) throws Exception {
        URI uri = url.toURI().resolve(path);
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
    }
}
