package dev.gpucloud.billing.rest;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * The isolation matrix of billing's REST API: every endpoint against every kind of caller, from one table. The
 * endpoints are read from the service's own OpenAPI document, so an endpoint without a row (or a row for one that is
 * gone) fails the build: a new endpoint cannot ship without saying who may call it. The scheduler's gRPC API has the
 * same table ({@code AuthenticationTest}).
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
@WithTestResource(TestIssuer.class)
class AccessMatrixTest {

    /** Who calls: the columns of the matrix. */
    enum Who { NO_TOKEN, BAD_TOKEN, OTHER_TENANTS_MEMBER, MEMBER, TENANT_ADMIN, FINANCE, OPERATOR }

    /** One endpoint's row: what each caller gets (in the order of {@link Who}), and how to call it for a tenant. */
    private record Row(List<Integer> expected, BiFunction<RequestSpecification, String, Integer> call) {
    }

    private static final List<Integer> READS_INVOICES = List.of(401, 401, 403, 200, 200, 200, 200);
    private static final Map<String, Row> MATRIX = new LinkedHashMap<>();

    static {
        MATRIX.put("GET /invoices/{tenant}", new Row(READS_INVOICES,
                (as, tenant) -> as.get("/invoices/{tenant}", tenant).statusCode()));
        MATRIX.put("GET /invoices/{tenant}/{month}", new Row(READS_INVOICES,
                (as, tenant) -> as.get("/invoices/{tenant}/2025-06", tenant).statusCode()));
        MATRIX.put("GET /invoices/{tenant}/{month}/lines", new Row(READS_INVOICES,
                (as, tenant) -> as.get("/invoices/{tenant}/2025-06/lines", tenant).statusCode()));
        MATRIX.put("GET /invoices/{tenant}/{month}/csv", new Row(READS_INVOICES,
                (as, tenant) -> as.get("/invoices/{tenant}/2025-06/csv", tenant).statusCode()));
        MATRIX.put("GET /invoices/{tenant}/current", new Row(READS_INVOICES,
                (as, tenant) -> as.get("/invoices/{tenant}/current", tenant).statusCode()));
        MATRIX.put("GET /advisor/{tenant}", new Row(READS_INVOICES,
                (as, tenant) -> as.queryParam("month", "2025-06").get("/advisor/{tenant}", tenant).statusCode()));
        MATRIX.put("GET /catalog", new Row(List.of(401, 401, 200, 200, 200, 200, 200),
                (as, tenant) -> as.get("/catalog").statusCode()));
        MATRIX.put("POST /catalog/entries", new Row(List.of(401, 401, 403, 403, 403, 403, 201),
                (as, tenant) -> as.contentType(ContentType.JSON).body("{\"gpuModel\": \"M-" + tenant + "\", "
                        + "\"capacityType\": \"SPOT\", \"effectiveFrom\": \"" + Instant.now().plus(1, ChronoUnit.DAYS)
                        .truncatedTo(ChronoUnit.SECONDS) + "\", \"microsPerGpuHour\": 1}")
                        .post("/catalog/entries").statusCode()));
        MATRIX.put("POST /invoices/{tenant}/{month}/close", new Row(List.of(401, 401, 403, 403, 403, 200, 403),
                (as, tenant) -> as.post("/invoices/{tenant}/2025-06/close", tenant).statusCode()));
        MATRIX.put("POST /invoices/{tenant}/adjustments", new Row(List.of(401, 401, 403, 403, 403, 201, 403),
                (as, tenant) -> as.contentType(ContentType.JSON).header("Idempotency-Key", UUID.randomUUID().toString())
                        .body("{\"amountMicros\": -1000000, \"reason\": \"matrix credit\"}")
                        .post("/invoices/{tenant}/adjustments", tenant).statusCode()));
    }

    @Test
    void every_endpoint_answers_every_caller_as_the_matrix_says() {
        Set<String> endpoints = new TreeSet<>();
        JsonPath openApi = given().queryParam("format", "json").get("/q/openapi").then().statusCode(200).extract()
                .jsonPath();
        Map<String, Map<String, Object>> paths = openApi.getMap("paths");
        paths.forEach((path, methods) -> methods.keySet().forEach(method -> endpoints.add(
                method.toUpperCase(java.util.Locale.ROOT) + " " + path)));
        assertThat(MATRIX.keySet()).as("a row for every endpoint of the API, and no row for an endpoint that is gone")
                .containsExactlyInAnyOrderElementsOf(endpoints);

        String run = UUID.randomUUID().toString().substring(0, 8);
        String tenant = "t-" + run + "a";
        String other = "t-" + run + "b";
        List<String> wrong = new ArrayList<>();
        for (var row : MATRIX.entrySet()) {
            for (Who who : Who.values()) {
                int expected = row.getValue().expected().get(who.ordinal());
                int got = row.getValue().call().apply(as(who, tenant, other), tenant);
                if (got != expected) {
                    wrong.add(row.getKey() + " as " + who + ": expected " + expected + ", got " + got);
                }
            }
        }
        assertThat(wrong).isEmpty();

        // of all those calls, only finance's changed the tenant's invoices: one adjustment, one closed month
        given().auth().oauth2(TestIssuer.token("fin", List.of(), List.of("finance")))
                .get("/invoices/{tenant}", tenant).then().statusCode(200)
                .body("closed", org.hamcrest.Matchers.equalTo(List.of("2025-06")));
        assertThat(given().auth().oauth2(TestIssuer.token("fin", List.of(), List.of("finance")))
                .get("/invoices/{tenant}/current", tenant).then().statusCode(200).extract().jsonPath()
                .getLong("totalMicros")).isEqualTo(-1_000_000);
    }

    private static RequestSpecification as(Who who, String tenant, String other) {
        RequestSpecification request = given();
        return switch (who) {
            case NO_TOKEN -> request;
            case BAD_TOKEN -> request.auth().oauth2(DevIssuer.inMemory(TestIssuer.issuer().issuer())
                    .mint("mallory", List.of(tenant), List.of("finance", "operator", "member"), Duration.ofHours(1)));
            case OTHER_TENANTS_MEMBER -> request.auth().oauth2(TestIssuer.token("bob", List.of(other),
                    List.of("member")));
            case MEMBER -> request.auth().oauth2(TestIssuer.token("alice", List.of(tenant), List.of("member")));
            case TENANT_ADMIN -> request.auth().oauth2(TestIssuer.token("ann", List.of(tenant),
                    List.of("tenant-admin")));
            case FINANCE -> request.auth().oauth2(TestIssuer.token("fin", List.of(), List.of("finance")));
            case OPERATOR -> request.auth().oauth2(TestIssuer.token("ops", List.of(), List.of("operator")));
        };
    }
}
