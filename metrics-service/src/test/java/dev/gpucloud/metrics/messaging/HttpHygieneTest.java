package dev.gpucloud.metrics.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.testsupport.KafkaTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import dev.gpucloud.testsupport.SlowClients;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Slow and hostile HTTP clients cannot hold this service's listener; read-only endpoints stay read-only. */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class HttpHygieneTest {

    @TestHTTPResource("/")
    URL url;

    @Test
    void read_only_endpoints_answer_only_get_and_head() {
        given().get("/q/metrics").then().statusCode(200);
        given().post("/q/metrics").then().statusCode(405).header("Allow", "GET, HEAD");
        given().delete("/q/health").then().statusCode(405);
        given().request("TRACE", "/q/health/ready").then().statusCode(405);
        given().put("/q/health/live").then().statusCode(405);
    }

    @Test
    void a_post_whose_body_never_finishes_loses_its_connection() throws Exception {
        assertThat(SlowClients.unfinishedBody(url, "/nothing-here", Duration.ofSeconds(60)))
                .isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void a_client_that_drips_one_header_line_every_5_s_is_cut_off() throws Exception {
        assertThat(SlowClients.dripHeaders(url, Duration.ofSeconds(5), Duration.ofSeconds(60)))
                .isLessThan(Duration.ofSeconds(15));
    }
}
