package dev.gpucloud.billing.rest;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.startsWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tenant isolation (a bearer token whose caller may read the path's tenant: its members, finance, operators),
 * the invoice views (lines, CSV, running cost), and the price catalog: read by anyone logged in, changed by an
 * operator only. Authentication is on here, against a real issuer found through discovery (TestIssuer).
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
@WithTestResource(TestIssuer.class)
class BillingApiTest {

    private static String member(String tenant) {
        return TestIssuer.token("alice", List.of(tenant), List.of("member"));
    }

    private static String operator() {
        return TestIssuer.token("ops", List.of(), List.of("operator"));
    }

    static Stream<Arguments> tenantScoped() {
        return Stream.of(
                Arguments.of("/invoices/acme?month=2025-06"),
                Arguments.of("/invoices/acme"),
                Arguments.of("/invoices/acme/2025-06"),
                Arguments.of("/invoices/acme/2025-06/lines"),
                Arguments.of("/invoices/acme/2025-06/csv"),
                Arguments.of("/invoices/acme/current"),
                Arguments.of("/advisor/acme?month=2025-06"));
    }

    @ParameterizedTest(name = "{0} without a token is a 401 saying how to log in")
    @MethodSource("tenantScoped")
    void no_token_is_a_401(String path) {
        given().get(path).then()
                .statusCode(401)
                .contentType(ContentType.JSON)
                .header("WWW-Authenticate", startsWith("Bearer"))
                .body("error", equalTo("unauthorized"))
                .body("parameter", equalTo("Authorization"))
                .body("message", startsWith("no bearer token"))
                .body("message", containsString("gpucloud login"));
    }

    @ParameterizedTest(name = "{0} for another tenant is a 403, before anything is read")
    @MethodSource("tenantScoped")
    void another_tenants_data_is_a_403(String path) {
        given().auth().oauth2(member("globex")).get(path).then()
                .statusCode(403)
                .contentType(ContentType.JSON)
                .body("error", equalTo("forbidden"))
                .body("message", containsString("may not read the invoices of tenant 'acme'"));
    }

    @ParameterizedTest(name = "{0} with an operator token of another issuer's key is a 401")
    @MethodSource("tenantScoped")
    void a_forged_token_is_a_401(String path) {
        String forged = DevIssuer.inMemory(TestIssuer.issuer().issuer()).mint("mallory", List.of("acme"),
                List.of("operator", "finance"), Duration.ofHours(1));
        given().auth().oauth2(forged).get(path).then()
                .statusCode(401)
                .body("parameter", equalTo("Authorization"))
                .body("message", containsString("not valid here"));
        given().auth().oauth2("not-a-jwt").get(path).then().statusCode(401);
    }

    @Test
    void finance_reads_any_tenants_invoice_and_a_tenant_admin_its_own() {
        given().auth().oauth2(TestIssuer.token("fin", List.of(), List.of("finance")))
                .get("/invoices/{tenant}/2025-06", "acme").then()
                .statusCode(200)
                .body("tenant", equalTo("acme"));
        given().auth().oauth2(TestIssuer.token("ann", List.of("acme"), List.of("tenant-admin")))
                .get("/invoices/{tenant}/2025-06", "acme").then()
                .statusCode(200);
        given().auth().oauth2(TestIssuer.token("ann", List.of("acme"), List.of("tenant-admin")))
                .get("/invoices/{tenant}/2025-06", "globex").then()
                .statusCode(403);
    }

    @Test
    void an_operator_reads_any_tenant() {
        given().auth().oauth2(operator()).get("/invoices/{tenant}/2025-06", "acme").then()
                .statusCode(200)
                .body("tenant", equalTo("acme"));
    }

    @Test
    void the_running_cost_is_the_current_month_open() {
        String tenant = "nobody-" + UUID.randomUUID().toString().substring(0, 8);
        given().auth().oauth2(member(tenant)).get("/invoices/{tenant}/current", tenant).then()
                .statusCode(200)
                .body("month", equalTo(YearMonth.now(ZoneOffset.UTC).toString()))
                .body("status", equalTo("OPEN"))
                .body("asOf", notNullValue())
                .body("totalMicros", equalTo(0))
                .body("total", equalTo("0.00"));
    }

    @Test
    void an_empty_invoice_exports_a_header_and_a_total_as_csv() {
        String tenant = "nobody-" + UUID.randomUUID().toString().substring(0, 8);
        given().auth().oauth2(member(tenant)).get("/invoices/{tenant}/2025-06/csv", tenant).then()
                .statusCode(200)
                .contentType(startsWith("text/csv"))
                .header("Content-Disposition", containsString("invoice-" + tenant + "-2025-06.csv"))
                .body(startsWith(InvoiceCsv.HEADER + "\r\n"))
                .body(containsString(tenant + ",2025-06,OPEN,TOTAL,,,,,,,0,,,\r\n"));
    }

    @Test
    void csv_text_is_quoted_and_cannot_run_as_a_formula() {
        org.assertj.core.api.Assertions.assertThat(InvoiceCsv.text("=HYPERLINK(\"x\")")).isEqualTo("\"'=HYPERLINK(\"\"x\"\")\"");
        org.assertj.core.api.Assertions.assertThat(InvoiceCsv.text("a,b")).isEqualTo("\"a,b\"");
        org.assertj.core.api.Assertions.assertThat(InvoiceCsv.text("job-1")).isEqualTo("job-1");
    }

    @Test
    void the_advisor_answers_for_the_callers_tenant_with_its_assumptions() {
        String tenant = "nobody-" + UUID.randomUUID().toString().substring(0, 8);
        given().auth().oauth2(member(tenant)).queryParam("month", "2025-06").get("/advisor/{tenant}", tenant)
                .then()
                .statusCode(200)
                .body("tenant", equalTo(tenant))
                .body("month", equalTo("2025-06"))
                .body("onDemandMicros", equalTo(0))
                .body("bestMicros", equalTo(0))
                .body("assumptions", hasItem(containsString("spot-tolerant")));
        given().auth().oauth2(member(tenant)).queryParam("month", "June").get("/advisor/{tenant}", tenant)
                .then()
                .statusCode(400)
                .body("parameter", equalTo("month"));
    }

    @Test
    void a_bad_month_in_the_path_is_a_400() {
        given().auth().oauth2(member("acme")).get("/invoices/acme/2025-13/lines").then()
                .statusCode(400)
                .body("parameter", equalTo("month"));
    }

    @Test
    void anyone_logged_in_reads_the_catalog_with_the_builtin_prices() {
        given().get("/catalog").then().statusCode(401);
        given().auth().oauth2(member("acme")).get("/catalog").then()
                .statusCode(200)
                .body("entries.find { it.gpuModel == 'A100-SXM4-40GB' && it.capacityType == 'ON_DEMAND' }"
                        + ".microsPerGpuHour", equalTo(2_745_000))
                .body("entries.find { it.gpuModel == 'V100-SXM2-16GB' && it.capacityType == 'SPOT' }.usdPerGpuHour",
                        equalTo("0.930000"))
                .body("migSlices", hasKey("A100-SXM4-40GB"));
    }

    @Test
    void an_operator_adds_a_future_price_and_the_catalog_shows_it() {
        String model = "T" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        String from = Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS).toString();
        given().auth().oauth2(operator()).contentType(ContentType.JSON)
                .body("{\"gpuModel\": \"" + model + "\", \"capacityType\": \"SPOT\", \"effectiveFrom\": \"" + from
                        + "\", \"microsPerGpuHour\": 1234567}")
                .post("/catalog/entries").then()
                .statusCode(201)
                .body("effectiveFrom", equalTo(from));
        given().auth().oauth2(member("acme")).get("/catalog").then()
                .body("entries.gpuModel", hasItem(model));
    }

    static Stream<Arguments> badEntries() {
        return Stream.of(
                Arguments.of("not JSON", "{oops", "body"),
                Arguments.of("not an object", "[1]", "body"),
                Arguments.of("no model", "{\"capacityType\": \"SPOT\", \"effectiveFrom\": \"2099-01-01T00:00:00Z\", "
                        + "\"microsPerGpuHour\": 1}", "gpuModel"),
                Arguments.of("a bad capacity type", "{\"gpuModel\": \"A\", \"capacityType\": \"CHEAP\", "
                        + "\"effectiveFrom\": \"2099-01-01T00:00:00Z\", \"microsPerGpuHour\": 1}", "capacityType"),
                Arguments.of("a bad instant", "{\"gpuModel\": \"A\", \"capacityType\": \"SPOT\", "
                        + "\"effectiveFrom\": \"tomorrow\", \"microsPerGpuHour\": 1}", "effectiveFrom"),
                Arguments.of("a negative price", "{\"gpuModel\": \"A\", \"capacityType\": \"SPOT\", "
                        + "\"effectiveFrom\": \"2099-01-01T00:00:00Z\", \"microsPerGpuHour\": -1}", "microsPerGpuHour"),
                Arguments.of("a fractional price", "{\"gpuModel\": \"A\", \"capacityType\": \"SPOT\", "
                        + "\"effectiveFrom\": \"2099-01-01T00:00:00Z\", \"microsPerGpuHour\": 1.5}", "microsPerGpuHour"),
                Arguments.of("a slash in the model", "{\"gpuModel\": \"A/B\", \"capacityType\": \"SPOT\", "
                        + "\"effectiveFrom\": \"2099-01-01T00:00:00Z\", \"microsPerGpuHour\": 1}", "gpuModel"),
                Arguments.of("a known model repriced in the past", "{\"gpuModel\": \"A100-SXM4-40GB\", "
                        + "\"capacityType\": \"ON_DEMAND\", \"effectiveFrom\": \"2025-01-01T00:00:00Z\", "
                        + "\"microsPerGpuHour\": 1}", "effectiveFrom"),
                // found by BillingFuzzTest: a NUL byte reached PostgreSQL and the answer was a 500
                Arguments.of("a NUL byte in the note", "{\"gpuModel\": \"FUZZ-NUL\", \"capacityType\": \"SPOT\", "
                        + "\"effectiveFrom\": \"2099-01-01T00:00:00Z\", \"microsPerGpuHour\": 1, "
                        + "\"note\": \"a\\u0000b\"}", "note"),
                Arguments.of("a year a billion years ahead", "{\"gpuModel\": \"FUZZ-Y\", \"capacityType\": \"SPOT\", "
                        + "\"effectiveFrom\": \"+1000000000-01-01T00:00:00Z\", \"microsPerGpuHour\": 1}",
                        "effectiveFrom"));
    }

    @ParameterizedTest(name = "{0} is a 400 naming {2}")
    @MethodSource("badEntries")
    void a_bad_price_entry_is_a_400_naming_the_field(String behaviour, String body, String field) {
        given().auth().oauth2(operator()).contentType(ContentType.JSON).body(body)
                .post("/catalog/entries").then()
                .statusCode(400)
                .body("parameter", equalTo(field));
    }

    @Test
    void a_price_update_needs_an_operator() {
        String body = "{\"gpuModel\": \"A100-SXM4-40GB\", \"capacityType\": \"SPOT\", "
                + "\"effectiveFrom\": \"2099-01-01T00:00:00Z\", \"microsPerGpuHour\": 1}";
        given().contentType(ContentType.JSON).body(body).post("/catalog/entries").then()
                .statusCode(401).body("parameter", equalTo("Authorization"));
        given().auth().oauth2(member("acme")).contentType(ContentType.JSON).body(body)
                .post("/catalog/entries").then()
                .statusCode(403).body("message", containsString("takes the role operator"));
        given().auth().oauth2(TestIssuer.token("fin", List.of(), List.of("finance"))).contentType(ContentType.JSON)
                .body(body).post("/catalog/entries").then()
                .statusCode(403);
    }

    @Test
    void every_attempt_to_change_the_catalog_leaves_one_audit_record_with_who_from_where_and_how_it_ended() {
        String model = "AUDIT" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        String body = "{\"gpuModel\": \"" + model + "\", \"capacityType\": \"SPOT\", \"effectiveFrom\": \""
                + Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS) + "\", \"microsPerGpuHour\": 1}";
        try (TestKafka kafka = new TestKafka(); TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name())) {
            given().contentType(ContentType.JSON).body(body).post("/catalog/entries").then().statusCode(401);
            given().auth().oauth2(member("acme")).contentType(ContentType.JSON).body(body)
                    .post("/catalog/entries").then().statusCode(403);
            given().auth().oauth2(operator()).contentType(ContentType.JSON).body("{oops")
                    .post("/catalog/entries").then().statusCode(400);
            given().auth().oauth2(operator()).contentType(ContentType.JSON).body(body)
                    .post("/catalog/entries").then().statusCode(201);

            List<AuditEvent> records = audit.until(r -> true, found -> found.size() >= 4, Duration.ofSeconds(20))
                    .stream().map(r -> EventRecords.decode(Topics.AUDIT_EVENTS, r).payload()).toList();
            assertThat(records).hasSize(4).allSatisfy(a -> {
                assertThat(a.action()).isEqualTo("billing.catalog.add");
                assertThat(a.from()).startsWith("127.0.0.1:");
                assertThat(a.tenant()).isEmpty();
            });
            assertThat(records).extracting(AuditEvent::subject, AuditEvent::result).containsExactly(
                    tuple("(anonymous)", "UNAUTHENTICATED"), tuple("alice", "PERMISSION_DENIED"),
                    tuple("ops", "INVALID_ARGUMENT"), tuple("ops", AuditEvent.OK));
            assertThat(records.get(1).roles()).containsExactly("member");
            assertThat(records.get(1).reason()).contains("takes the role operator");
            assertThat(records.get(3).target()).contains(model, "SPOT");
            assertThat(audit.matching(r -> true)).allSatisfy(r -> {
                assertThat(r.key()).isEqualTo("-");
                assertThat(TopicTail.header(r, "ce_source")).isEqualTo("billing-service");
                assertThat(new String(r.value(), java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("eyJ");
            });
        }
    }

    @Test
    void the_openapi_document_describes_every_endpoint() {
        given().queryParam("format", "json").get("/q/openapi").then()
                .statusCode(200)
                .body("paths", hasKey("/invoices/{tenant}/{month}/csv"))
                .body("paths", hasKey("/invoices/{tenant}/current"))
                .body("paths", hasKey("/invoices/{tenant}/{month}/lines"))
                .body("paths", hasKey("/catalog/entries"))
                .body("paths", hasKey("/advisor/{tenant}"))
                .body("paths.'/invoices/{tenant}/{month}/close'", hasKey("post"))
                .body("paths.'/invoices/{tenant}/adjustments'", hasKey("post"))
                .body("paths.'/invoices/{tenant}/adjustments'.post.parameters.name", hasItem("Idempotency-Key"))
                .body("components.schemas", hasKey("NewAdjustment"))
                .body("components.schemas", hasKey("AdjustmentLine"));
    }
}
