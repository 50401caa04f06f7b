package dev.gpucloud.billing.rest;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import dev.gpucloud.cli.GpucloudCli;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code gpucloud invoice close} and {@code gpucloud invoice adjust} against this service, with a finance login
 * stored as {@code gpucloud login} stores it: the commands and the API agree on paths, headers, fields and answers.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
@WithTestResource(TestIssuer.class)
class CliAgainstBillingTest {

    @TestHTTPResource("/")
    URL url;

    private Path home;
    private String tenant;

    private record Run(int code, String out, String err) {
    }

    @BeforeEach
    void login() throws Exception {
        home = Files.createTempDirectory("gpucloud-home");
        Files.createDirectories(home.resolve("profiles"));
        Files.writeString(home.resolve("profiles/fin.token"), TestIssuer.token("fin", List.of(), List.of("finance")));
        Files.writeString(home.resolve("profiles/ops.token"), TestIssuer.token("ops", List.of(), List.of("operator")));
        System.setProperty("gpucloud.home", home.toString());
        tenant = "t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void logout() {
        System.clearProperty("gpucloud.home");
    }

    private Run gpucloud(String profile, String... args) {
        List<String> all = new ArrayList<>(List.of("--profile", profile, "invoice", "--billing",
                url.toString().replaceAll("/$", "")));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void finance_books_a_credit_repeats_it_safely_and_closes_the_month() {
        Run booked = gpucloud("fin", "adjust", "--tenant", tenant, "--amount", "-12.50", "--reason",
                "SLA credit: 4 h down", "--month", "2025-06");
        assertThat(booked.code()).as(booked.err()).isZero();
        Matcher key = Pattern.compile("idempotency key ([0-9a-f-]{36}) \\(generated").matcher(booked.out());
        assertThat(key.find()).as(booked.out()).isTrue();
        assertThat(booked.out()).startsWith("booked adjustment ").contains(": -12.500000 USD on the invoice of " + tenant
                + " for 2025-06 (SLA credit: 4 h down)");

        Run again = gpucloud("fin", "adjust", "--tenant", tenant, "--amount", "-12.5", "--reason",
                "SLA credit: 4 h down", "--month", "2025-06", "--idempotency-key", key.group(1));
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.out()).contains("was booked before under idempotency key " + key.group(1))
                .endsWith("nothing new booked\n");

        Run closed = gpucloud("fin", "close", "--tenant", tenant, "--month", "2025-06");
        assertThat(closed.code()).as(closed.err()).isZero();
        assertThat(closed.out()).startsWith("closed the invoice of " + tenant + " for 2025-06: total -12.50 USD"
                + " (-12500000 micro-USD), 0 line(s), 1 adjustment(s), closed at ");
        assertThat(gpucloud("fin", "close", "--tenant", tenant, "--month", "2025-06").out())
                .startsWith("already closed at ");

        given().auth().oauth2(TestIssuer.token("fin", List.of(), List.of("finance")))
                .get("/invoices/{tenant}/2025-06", tenant).then()
                .body("status", equalTo("CLOSED"))
                .body("adjustments", hasSize(1))
                .body("totalMicros", equalTo(-12_500_000));
    }

    @Test
    void billings_refusals_reach_the_user_as_one_line() {
        Run operator = gpucloud("ops", "adjust", "--tenant", tenant, "--amount", "-1", "--reason", "x");
        assertThat(operator.code()).isEqualTo(1);
        assertThat(operator.err()).startsWith("error: billing refused it, HTTP 403 (Authorization): 'ops' (operator)"
                + " may not book adjustments on invoices: that takes the role finance");

        Run current = gpucloud("fin", "close", "--tenant", tenant, "--month",
                java.time.YearMonth.now(java.time.ZoneOffset.UTC).toString());
        assertThat(current.code()).isEqualTo(1);
        assertThat(current.err()).contains("HTTP 409 (month)").contains("cannot close yet")
                .contains("closes by itself at");

        Run nobody = gpucloud("nobody", "close", "--tenant", tenant, "--month", "2025-06");
        assertThat(nobody.code()).isEqualTo(1);
        assertThat(nobody.err()).contains("HTTP 401 (Authorization): no bearer token");
    }
}
