package dev.gpucloud.billing.rest;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.lessThan;

import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The invoice API refuses bad and hostile input with a JSON error that names the parameter. */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class InvoiceResourceTest {

    private static String unknownTenant() {
        return "nobody-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void a_month_without_usage_is_an_empty_open_invoice() {
        String tenant = unknownTenant();
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .contentType(ContentType.JSON)
                .body("tenant", equalTo(tenant))
                .body("month", equalTo("2025-06"))
                .body("status", equalTo("OPEN"))
                .body("currency", equalTo("USD"))
                .body("lines", empty())
                .body("totalMicros", equalTo(0))
                .body("total", equalTo("0.00"));
    }

    @Test
    void a_tenant_without_usage_has_no_months() {
        String tenant = unknownTenant();
        given().get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("tenant", equalTo(tenant))
                .body("months", empty());
    }

    @ParameterizedTest(name = "month ''{0}'' is refused")
    @ValueSource(strings = {"2025-13", "2025-00", "2025-6", "25-06", "2025-06-01", "2025/06", "June", "", " ",
            "+2025-06", "２０２５-０６", "2025-06' OR '1'='1", "<script>alert(1)</script>", "2025-06%00",
            "../../etc/passwd", "${jndi:ldap://x/a}"})
    void a_bad_month_is_a_400_naming_the_month(String month) {
        given().queryParam("month", month).get("/invoices/{tenant}", "acme").then()
                .statusCode(400)
                .contentType(ContentType.JSON)
                .body("error", equalTo("bad_request"))
                .body("parameter", equalTo("month"))
                .body("message", containsString("parameter 'month' must be a month YYYY-MM"));
    }

    @Test
    void a_very_long_month_is_refused_and_clipped_in_the_message() {
        given().queryParam("month", "9".repeat(2000)).get("/invoices/{tenant}", "acme").then()
                .statusCode(400)
                .body("parameter", equalTo("month"))
                .body("message.length()", lessThan(200));
    }

    @ParameterizedTest(name = "tenant ''{0}'' is refused")
    @ValueSource(strings = {"ACME", "-acme", "acme_corp", "acme corp", "x' OR '1'='1", "acme;DROP TABLE allocation",
            "<script>alert(1)</script>", "tënant", "acme%00", "$(id)", "acme\nSet-Cookie: x=y",
            "a123456789a123456789a123456789a123456789a123456789a123456789abcd"})
    void a_bad_tenant_is_a_400_naming_the_tenant(String tenant) {
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(400)
                .contentType(ContentType.JSON)
                .body("parameter", equalTo("tenant"))
                .body("message", containsString("parameter 'tenant'"));
        given().get("/invoices/{tenant}", tenant).then()
                .statusCode(400)
                .body("parameter", equalTo("tenant"));
    }

    static Stream<Arguments> unroutable() {
        return Stream.of(
                Arguments.of("a slash in the tenant", "acme/../globex"),
                Arguments.of("a NUL byte", "acme\u0000"),
                Arguments.of("a huge tenant", "a".repeat(20_000)));
    }

    @ParameterizedTest(name = "{0} never reaches a tenant's data")
    @MethodSource("unroutable")
    void hostile_paths_are_refused_without_a_server_error(String behaviour, String tenant) {
        int status;
        try {
            status = given().queryParam("month", "2025-06")
                    .get("/invoices/{tenant}", tenant).statusCode();
        } catch (Exception e) {
            // the server may answer a 20,000-character request line and close before the client has sent it all:
            // the client then sees its connection cut (a broken pipe or a reset), which is a refusal too
            Throwable cause = e;
            while (cause != null && !(cause instanceof java.net.SocketException)) {
                cause = cause.getCause();
            }
            assertThat(cause).as("only a connection cut off by the server, not " + e).isNotNull();
            return;
        }
        assertThat(status).isIn(400, 404, 414, 431);
    }

    @Test
    void readiness_covers_the_database_and_kafka() {
        given().get("/q/health/ready").then()
                .statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.name", hasItem(containsString("PostgreSQL")))
                .body("checks.name", hasItem(containsString("Reactive Messaging")));
    }

    @Test
    void the_openapi_document_describes_the_invoice_api() {
        given().queryParam("format", "json").get("/q/openapi").then()
                .statusCode(200)
                .body("paths.'/invoices/{tenant}'.get.parameters.name", hasItem("month"))
                .body("components.schemas.Invoice.properties.size()", greaterThanOrEqualTo(7));
    }
}
