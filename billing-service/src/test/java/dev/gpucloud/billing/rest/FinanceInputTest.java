package dev.gpucloud.billing.rest;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.startsWith;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.time.Duration;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Finance's two calls refuse bad and hostile input with a 400 that names the parameter, header or field, book
 * nothing when they do, refuse every role but finance with a 403 naming it, and leave one audit record per call,
 * accepted or refused.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
@WithTestResource(TestIssuer.class)
class FinanceInputTest {

    private static final String FINANCE = TestIssuer.token("fin", List.of(), List.of("finance"));
    private static final String GOOD = "{\"amountMicros\": -1000000, \"reason\": \"SLA credit\"}";

    private String tenant;

    @BeforeEach
    void fresh() {
        tenant = "t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private io.restassured.response.Response adjust(String key, String body) {
        var request = given().auth().oauth2(FINANCE).contentType(ContentType.JSON).body(body);
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return request.post("/invoices/{tenant}/adjustments", tenant);
    }

    static Stream<Arguments> badBodies() {
        String future = YearMonth.now(ZoneOffset.UTC).plusMonths(1).toString();
        return Stream.of(
                Arguments.of("an empty body", "", "body"),
                Arguments.of("not JSON", "{oops", "body"),
                Arguments.of("not an object", "[-1000000]", "body"),
                Arguments.of("a field given twice", "{\"amountMicros\": -1, \"amountMicros\": -1000000000000, "
                        + "\"reason\": \"x\"}", "body"),
                Arguments.of("a body of 9,000 characters", "{\"amountMicros\": -1, \"reason\": \"" + "x".repeat(9000)
                        + "\"}", "body"),
                Arguments.of("an unknown field", "{\"amountMicros\": -1, \"reason\": \"x\", \"currency\": \"EUR\"}",
                        "currency"),
                Arguments.of("no amount", "{\"reason\": \"x\"}", "amountMicros"),
                Arguments.of("an amount that is a string", "{\"amountMicros\": \"-12.50\", \"reason\": \"x\"}",
                        "amountMicros"),
                Arguments.of("an amount with decimals", "{\"amountMicros\": -12.5, \"reason\": \"x\"}", "amountMicros"),
                Arguments.of("an amount in exponent form", "{\"amountMicros\": -1e6, \"reason\": \"x\"}",
                        "amountMicros"),
                Arguments.of("an amount of 0", "{\"amountMicros\": 0, \"reason\": \"x\"}", "amountMicros"),
                Arguments.of("a credit beyond 1,000,000 USD", "{\"amountMicros\": -1000000000001, \"reason\": \"x\"}",
                        "amountMicros"),
                Arguments.of("an amount beyond a long", "{\"amountMicros\": 99999999999999999999, \"reason\": \"x\"}",
                        "amountMicros"),
                Arguments.of("no reason", "{\"amountMicros\": -1}", "reason"),
                Arguments.of("a null reason", "{\"amountMicros\": -1, \"reason\": null}", "reason"),
                Arguments.of("a blank reason", "{\"amountMicros\": -1, \"reason\": \"  \"}", "reason"),
                Arguments.of("a reason that is a number", "{\"amountMicros\": -1, \"reason\": 42}", "reason"),
                Arguments.of("a reason of 501 characters", "{\"amountMicros\": -1, \"reason\": \"" + "x".repeat(501)
                        + "\"}", "reason"),
                Arguments.of("a line break in the reason", "{\"amountMicros\": -1, \"reason\": \"a\\nb\"}", "reason"),
                Arguments.of("a NUL in the reason", "{\"amountMicros\": -1, \"reason\": \"a\\u0000b\"}", "reason"),
                Arguments.of("an escape sequence in the reason", "{\"amountMicros\": -1, \"reason\": \"a\\u001b[31mb\"}",
                        "reason"),
                Arguments.of("a malformed month", "{\"amountMicros\": -1, \"reason\": \"x\", \"month\": \"2025-13\"}",
                        "month"),
                Arguments.of("a month that is a number", "{\"amountMicros\": -1, \"reason\": \"x\", \"month\": 202506}",
                        "month"),
                Arguments.of("a month before 2020", "{\"amountMicros\": -1, \"reason\": \"x\", \"month\": \"2019-12\"}",
                        "month"),
                Arguments.of("a month after the current one", "{\"amountMicros\": -1, \"reason\": \"x\", \"month\": \""
                        + future + "\"}", "month"));
    }

    @ParameterizedTest(name = "{0} is a 400 naming {2}")
    @MethodSource("badBodies")
    void a_bad_adjustment_is_a_400_naming_the_field_and_books_nothing(String behaviour, String body, String field) {
        adjust(UUID.randomUUID().toString(), body).then()
                .statusCode(400)
                .contentType(ContentType.JSON)
                .body("error", equalTo("bad_request"))
                .body("parameter", equalTo(field))
                .body("message", containsString(field.equals("body") ? "body" : "'" + field + "'"))
                .body("message.length()", lessThan(600));
        nothingBooked();
    }

    @ParameterizedTest(name = "Idempotency-Key ''{0}'' is a 400 naming the header")
    @ValueSource(strings = {"a b", "key;DROP TABLE invoice", "../../etc", "ключ",
        "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"})
    void a_bad_idempotency_key_is_a_400_naming_the_header(String key) {
        adjust(key, GOOD).then()
                .statusCode(400)
                .body("parameter", equalTo("Idempotency-Key"));
        nothingBooked();
    }

    @Test
    void an_adjustment_without_an_idempotency_key_is_a_400_naming_the_header() {
        adjust(null, GOOD).then()
                .statusCode(400)
                .body("parameter", equalTo("Idempotency-Key"))
                .body("message", containsString("missing required field 'Idempotency-Key'"));
        nothingBooked();
    }

    @ParameterizedTest(name = "month ''{0}'' of a close is a 400 naming the month")
    @ValueSource(strings = {"2025-13", "2025-6", "June", "2019-12", "2025-06' OR '1'='1", "0000-01"})
    void a_bad_month_to_close_is_a_400(String month) {
        given().auth().oauth2(FINANCE).post("/invoices/{tenant}/{month}/close", tenant, month).then()
                .statusCode(400)
                .body("parameter", equalTo("month"));
        given().auth().oauth2(FINANCE).get("/invoices/{tenant}", tenant).then().body("closed", empty());
    }

    @ParameterizedTest(name = "tenant ''{0}'' is a 400 naming the tenant")
    @ValueSource(strings = {"ACME", "-acme", "acme_corp", "x' OR '1'='1", "acme;DROP TABLE invoice", "$(id)", "tënant",
        "a123456789a123456789a123456789a123456789a123456789a123456789abcd"})
    void a_bad_tenant_is_a_400_for_both_calls(String bad) {
        given().auth().oauth2(FINANCE).post("/invoices/{tenant}/2025-06/close", bad).then()
                .statusCode(400).body("parameter", equalTo("tenant"));
        given().auth().oauth2(FINANCE).contentType(ContentType.JSON).header("Idempotency-Key", UUID.randomUUID())
                .body(GOOD).post("/invoices/{tenant}/adjustments", bad).then()
                .statusCode(400).body("parameter", equalTo("tenant"));
    }

    @ParameterizedTest(name = "tenant ''{0}'' in the path never reaches a tenant")
    @ValueSource(strings = {"acme/../globex", "..", "acme\u0000", "acme%2F..%2Fglobex"})
    void a_path_traversal_in_the_tenant_is_refused(String bad) {
        int close = given().auth().oauth2(FINANCE).post("/invoices/{tenant}/2025-06/close", bad).statusCode();
        int adjust = given().auth().oauth2(FINANCE).contentType(ContentType.JSON)
                .header("Idempotency-Key", UUID.randomUUID()).body(GOOD).post("/invoices/{tenant}/adjustments", bad)
                .statusCode();
        assertThat(List.of(close, adjust)).allSatisfy(status -> assertThat(status).isIn(400, 404, 405));
    }

    @Test
    void every_role_but_finance_is_a_403_naming_the_role_and_no_token_a_401_saying_how_to_log_in() {
        for (String token : List.of(TestIssuer.token("alice", List.of(tenant), List.of("member")),
                TestIssuer.token("ann", List.of(tenant), List.of("tenant-admin")),
                TestIssuer.token("ops", List.of(), List.of("operator")))) {
            given().auth().oauth2(token).post("/invoices/{tenant}/2025-06/close", tenant).then()
                    .statusCode(403)
                    .body("error", equalTo("forbidden"))
                    .body("message", containsString("may not close invoices: that takes the role finance"));
            given().auth().oauth2(token).contentType(ContentType.JSON).header("Idempotency-Key", UUID.randomUUID())
                    .body(GOOD).post("/invoices/{tenant}/adjustments", tenant).then()
                    .statusCode(403)
                    .body("message", containsString("may not book adjustments on invoices: that takes the role finance"));
        }
        given().post("/invoices/{tenant}/2025-06/close", tenant).then()
                .statusCode(401)
                .header("WWW-Authenticate", startsWith("Bearer"))
                .body("message", startsWith("no bearer token"))
                .body("message", containsString("gpucloud login"));
        given().contentType(ContentType.JSON).header("Idempotency-Key", UUID.randomUUID()).body(GOOD)
                .post("/invoices/{tenant}/adjustments", tenant).then()
                .statusCode(401)
                .body("parameter", equalTo("Authorization"));
        nothingBooked();
        given().auth().oauth2(FINANCE).get("/invoices/{tenant}", tenant).then().body("closed", empty());
    }

    @Test
    void every_close_and_adjustment_leaves_one_audit_record_with_who_from_where_and_how_it_ended() {
        String current = YearMonth.now(ZoneOffset.UTC).toString();
        String key = "audit-" + UUID.randomUUID();
        String operator = TestIssuer.token("ops", List.of(), List.of("operator"));
        String admin = TestIssuer.token("ann", List.of(tenant), List.of("tenant-admin"));
        try (TestKafka kafka = new TestKafka(); TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name())) {
            given().post("/invoices/{tenant}/2025-06/close", tenant).then().statusCode(401);
            given().auth().oauth2(operator).post("/invoices/{tenant}/2025-06/close", tenant).then().statusCode(403);
            given().auth().oauth2(FINANCE).post("/invoices/{tenant}/{month}/close", tenant, current).then()
                    .statusCode(409);
            given().auth().oauth2(FINANCE).post("/invoices/{tenant}/2025-06/close", tenant).then().statusCode(200);
            given().auth().oauth2(FINANCE).post("/invoices/{tenant}/2025-06/close", tenant).then().statusCode(200);
            given().auth().oauth2(admin).contentType(ContentType.JSON).header("Idempotency-Key", key).body(GOOD)
                    .post("/invoices/{tenant}/adjustments", tenant).then().statusCode(403);
            adjust(key, "{oops").then().statusCode(400);
            long id = adjust(key, GOOD).then().statusCode(201).extract().jsonPath().getLong("id");
            adjust(key, GOOD).then().statusCode(200);
            adjust(key, "{\"amountMicros\": -2, \"reason\": \"x\"}").then().statusCode(409);

            List<AuditEvent> records = audit.until(r -> tenant.equals(r.key()), found -> found.size() >= 10,
                    Duration.ofSeconds(20)).stream().map(r -> EventRecords.decode(Topics.AUDIT_EVENTS, r).payload())
                    .toList();
            assertThat(records).hasSize(10).allSatisfy(a -> {
                assertThat(a.tenant()).isEqualTo(tenant);
                assertThat(a.from()).startsWith("127.0.0.1:");
            });
            assertThat(records).extracting(AuditEvent::action, AuditEvent::subject, AuditEvent::result).containsExactly(
                    tuple("billing.invoice.close", "(anonymous)", "UNAUTHENTICATED"),
                    tuple("billing.invoice.close", "ops", "PERMISSION_DENIED"),
                    tuple("billing.invoice.close", "fin", "FAILED_PRECONDITION"),
                    tuple("billing.invoice.close", "fin", AuditEvent.OK),
                    tuple("billing.invoice.close", "fin", AuditEvent.OK),
                    tuple("billing.invoice.adjust", "ann", "PERMISSION_DENIED"),
                    tuple("billing.invoice.adjust", "fin", "INVALID_ARGUMENT"),
                    tuple("billing.invoice.adjust", "fin", AuditEvent.OK),
                    tuple("billing.invoice.adjust", "fin", AuditEvent.OK),
                    tuple("billing.invoice.adjust", "fin", "FAILED_PRECONDITION"));
            assertThat(records.get(1).reason()).contains("takes the role finance");
            assertThat(records.get(2).reason()).contains("cannot close yet");
            assertThat(records.get(3).target()).isEqualTo("invoice " + tenant + " 2025-06");
            assertThat(records.get(3).reason()).isEmpty();
            assertThat(records.get(4).reason()).contains("already closed");
            assertThat(records.get(5).target()).isEqualTo("adjustment key " + key);
            assertThat(records.get(6).reason()).contains("not valid JSON");
            assertThat(records.get(7).target()).isEqualTo("-1.00 USD on " + current + " (adjustment " + id + ")");
            assertThat(records.get(8).reason()).contains("a repeat of key " + key);
            assertThat(records.get(9).reason()).contains("a new adjustment needs a new key");
        }
    }

    private void nothingBooked() {
        given().auth().oauth2(FINANCE).get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("months", empty());
    }
}
