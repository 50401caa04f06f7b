package dev.gpucloud.agent.rest;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;

import dev.gpucloud.agent.messaging.UniqueAgentResource;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.ScrapeTokenResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/** With a scrape token configured, /q/metrics answers the scraper that sends it and no one else; health stays open. */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(ScrapeTokenResource.class)
class ScrapeTokenTest {

    @Test
    void metrics_answer_only_the_scrape_token() {
        given().header("Authorization", "Bearer " + ScrapeTokenResource.TOKEN).get("/q/metrics").then()
                .statusCode(200).body(containsString("gpucloud_agent_"));
        given().get("/q/metrics").then().statusCode(401).header("WWW-Authenticate", containsString("Bearer"))
                .body(containsString("scrape token"));
        given().header("Authorization", "Bearer " + ScrapeTokenResource.TOKEN + "x").get("/q/metrics").then()
                .statusCode(401);
        given().header("Authorization", "Basic " + ScrapeTokenResource.TOKEN).get("/q/metrics").then().statusCode(401);
        given().header("Authorization", "Bearer " + ScrapeTokenResource.TOKEN).post("/q/metrics").then().statusCode(405);
        given().get("/q/health/live").then().statusCode(200);
    }
}
