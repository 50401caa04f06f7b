package dev.gpucloud.agent.rest;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import dev.gpucloud.agent.messaging.UniqueAgentResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The agent's own endpoints take an operator's token from the stack's issuer, found through discovery as a
 * production provider's would be; anyone else is refused before the endpoint runs. Health stays open.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(TestIssuer.class)
class AgentAccessTest {

    @Inject
    AgentConfig config;

    private static String bearer(String token) {
        return "Bearer " + token;
    }

    @Test
    void an_operator_reads_the_hosts_and_injects_faults() {
        String operator = bearer(TestIssuer.token("op", List.of(), List.of("operator")));
        given().header("Authorization", operator).get("/agent/hosts").then().statusCode(200)
                .body("[0].nodeId", containsString(config.sim().nodePrefix()));
        given().header("Authorization", operator).post("/agent/faults/nowhere-0/xid").then().statusCode(404)
                .body("error", equalTo("no simulated host 'nowhere-0' here"));
    }

    @Test
    void no_token_a_bad_token_or_another_role_is_refused_before_the_endpoint_runs() {
        DevIssuer other = DevIssuer.inMemory(TestIssuer.issuer().issuer());
        Map<String, String> unauthorized = new LinkedHashMap<>();
        unauthorized.put("signed by another key", bearer(other.mint("mallory", List.of(), List.of("operator"),
                Duration.ofHours(1))));
        unauthorized.put("expired", bearer(TestIssuer.issuer().mint("op", List.of(), List.of("operator"),
                Duration.ofMinutes(-5))));
        var otherAudience = TestIssuer.issuer().claims("op", List.of(), List.of("operator"), java.time.Instant.now(),
                Duration.ofHours(1));
        otherAudience.setAudience("someone-else");
        unauthorized.put("for another audience", bearer(TestIssuer.issuer().sign(otherAudience)));
        unauthorized.put("not a JWT", "Bearer not-a-token");
        unauthorized.put("unsigned (alg none)", bearer("eyJhbGciOiJub25lIn0.eyJzdWIiOiJvcCIsImdyb3VwcyI6WyJvcGVyYXR"
                + "vciJdLCJleHAiOjQxMDI0NDQ4MDB9."));
        unauthorized.put("another scheme", "Basic b3A6b3A=");
        unauthorized.forEach((what, header) -> given().header("Authorization", header)
                .post("/agent/faults/" + config.sim().nodePrefix() + "-a10g-spot-0/host-loss").then().statusCode(401)
                .header("WWW-Authenticate", containsString("Bearer"))
                .body("error", containsString("gpucloud login` (your OIDC provider's device flow")));
        given().get("/agent/hosts").then().statusCode(401).body("error", containsString("no bearer token"));
        // an oversized token does not get past the HTTP layer's header limit (16 KiB)
        given().header("Authorization", bearer("a".repeat(16 * 1024 + 1))).get("/agent/hosts").then().statusCode(431);

        String member = bearer(TestIssuer.token("alice", List.of("acme"), List.of("member")));
        given().header("Authorization", member).get("/agent/hosts").then().statusCode(403)
                .body("error", containsString("that takes the role operator"));
        String finance = bearer(TestIssuer.token("fin", List.of(), List.of("finance")));
        given().header("Authorization", finance).post("/agent/faults/" + config.sim().nodePrefix()
                + "-a10g-spot-0/host-loss").then().statusCode(403);
        // the host was not lost: the refused calls never reached the endpoint
        given().header("Authorization", bearer(TestIssuer.token("op", List.of(), List.of("operator"))))
                .get("/agent/hosts").then().statusCode(200)
                .body("nodeId", org.hamcrest.Matchers.hasItem(config.sim().nodePrefix() + "-a10g-spot-0"));
        given().get("/q/health/live").then().statusCode(200);
    }
}
