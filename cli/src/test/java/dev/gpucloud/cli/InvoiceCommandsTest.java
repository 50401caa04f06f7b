package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * invoice close and invoice adjust: what they send to billing (the path, the profile's token, an exact amount in
 * micro-USD, the idempotency key) and how they say what billing answered, against a recording server.
 */
class InvoiceCommandsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BOOKED = """
            {"id": 17, "tenant": "acme", "month": "2025-07", "amountMicros": -12500000, "amountUsd": "-12.500000",
             "reason": "SLA credit", "idempotencyKey": "%s", "bookedBy": "fin", "bookedAt": "2025-07-04T09:12:00Z",
             "repeated": %s}""";

    @TempDir
    Path dir;
    FakeBilling billing;

    @BeforeEach
    void start() throws Exception {
        System.setProperty("gpucloud.home", dir.resolve("home").toString());
        Files.createDirectories(dir.resolve("home/profiles"));
        Files.writeString(dir.resolve("home/profiles/fin.token"), "fin.token.jwt\n");
        billing = new FakeBilling();
    }

    @AfterEach
    void stop() {
        System.clearProperty("gpucloud.home");
        billing.close();
    }

    private GpucloudCliTest.Result cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--profile", "fin", "invoice", "--billing", billing.base));
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new GpucloudCliTest.Result(code, out.toString(), err.toString());
    }

    @Test
    void close_posts_the_tenants_month_with_the_profiles_token_and_says_what_billing_froze() {
        billing.answering(200, """
                {"closedNow": true, "message": "closed the invoice of acme for 2025-06",
                 "invoice": {"tenant": "acme", "month": "2025-06", "status": "CLOSED", "closedAt": "2025-07-02T10:00:00Z",
                             "lines": [{}], "adjustments": [], "totalMicros": 2745000, "total": "2.75"}}""");
        GpucloudCliTest.Result r = cli("close", "--tenant", "acme", "--month", "2025-06");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("closed the invoice of acme for 2025-06: total 2.75 USD (2745000 micro-USD),"
                + " 1 line(s), 0 adjustment(s), closed at 2025-07-02T10:00:00Z\n");
        assertThat(billing.requests).singleElement().satisfies(request -> {
            assertThat(request.method()).isEqualTo("POST");
            assertThat(request.path()).isEqualTo("/invoices/acme/2025-06/close");
            assertThat(request.authorization()).isEqualTo("Bearer fin.token.jwt");
            assertThat(request.body()).isEmpty();
        });
    }

    static Stream<Arguments> amounts() {
        return Stream.of(
                Arguments.of("-12.50", -12_500_000L),
                Arguments.of("-12.5", -12_500_000L),
                Arguments.of("100", 100_000_000L),
                Arguments.of("+0.000001", 1L),
                Arguments.of("-0.1", -100_000L),
                Arguments.of("-1000000", -1_000_000_000_000L),
                Arguments.of("1000000.000000", 1_000_000_000_000L));
    }

    @ParameterizedTest(name = "--amount {0} is {1} micro-USD, exactly")
    @MethodSource("amounts")
    void adjust_sends_the_amount_in_micro_usd_exactly(String usd, long micros) throws Exception {
        billing.answering(201, BOOKED.formatted("k-1", "false"));
        GpucloudCliTest.Result r = cli("adjust", "--tenant", "acme", "--amount", usd, "--reason", "SLA credit",
                "--idempotency-key", "k-1");

        assertThat(r.code()).as(r.err()).isZero();
        JsonNode body = JSON.readTree(billing.requests.get(0).body());
        assertThat(body.get("amountMicros").isIntegralNumber()).isTrue();
        assertThat(body.get("amountMicros").asLong()).isEqualTo(micros);
    }

    @Test
    void adjust_generates_a_key_prints_it_and_a_repeat_says_nothing_new_was_booked() throws Exception {
        billing.answering(201, BOOKED.formatted("ignored", "false"));
        GpucloudCliTest.Result r = cli("adjust", "--tenant", "acme", "--amount", "-12.50", "--reason", "SLA credit",
                "--month", "2025-07");

        assertThat(r.code()).as(r.err()).isZero();
        FakeBilling.Request sent = billing.requests.get(0);
        assertThat(sent.path()).isEqualTo("/invoices/acme/adjustments");
        assertThat(sent.authorization()).isEqualTo("Bearer fin.token.jwt");
        assertThat(sent.contentType()).startsWith("application/json");
        assertThat(sent.idempotencyKey()).matches("[0-9a-f-]{36}");
        assertThat(JSON.readTree(sent.body())).isEqualTo(JSON.readTree(
                "{\"amountMicros\": -12500000, \"reason\": \"SLA credit\", \"month\": \"2025-07\"}"));
        assertThat(r.out()).isEqualTo("booked adjustment 17: -12.500000 USD on the invoice of acme for 2025-07 (SLA"
                + " credit); idempotency key " + sent.idempotencyKey() + " (generated: give it as --idempotency-key to"
                + " retry safely)\n");

        billing.answering(200, BOOKED.formatted(sent.idempotencyKey(), "true"));
        GpucloudCliTest.Result again = cli("adjust", "--tenant", "acme", "--amount", "-12.50", "--reason", "SLA credit",
                "--month", "2025-07", "--idempotency-key", sent.idempotencyKey());
        assertThat(again.code()).isZero();
        assertThat(billing.requests.get(1).idempotencyKey()).isEqualTo(sent.idempotencyKey());
        assertThat(again.out()).startsWith("adjustment 17 was booked before under idempotency key "
                + sent.idempotencyKey()).endsWith("; nothing new booked\n");
    }

    @Test
    void json_output_is_billings_answer_as_it_is() {
        String answer = BOOKED.formatted("k-2", "false");
        billing.answering(201, answer);
        GpucloudCliTest.Result r = cli("adjust", "--tenant", "acme", "--amount", "1", "--reason", "x",
                "--idempotency-key", "k-2", "-o", "json");
        assertThat(r.out()).isEqualTo(answer + "\n");
    }

    static Stream<Arguments> refusedBeforeSending() {
        return Stream.of(
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "-12,50", "--reason", "x"},
                        "--amount must be USD such as -12.50"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "1e3", "--reason", "x"},
                        "no exponent"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "$12", "--reason", "x"},
                        "--amount must be USD"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "0.0000001", "--reason", "x"},
                        "at most 6 decimals"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "-0.00", "--reason", "x"},
                        "--amount must not be 0"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "12500000", "--reason", "x"},
                        "--amount must be within -1000000..1000000 USD"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "-1", "--reason", "x", "--month",
                    "2025-13"}, "--month must be a month YYYY-MM"),
                Arguments.of(new String[] {"adjust", "--tenant", "../etc", "--amount", "-1", "--reason", "x"},
                        "--tenant must be 1..63 lower-case letters"),
                Arguments.of(new String[] {"adjust", "--tenant", "acme", "--amount", "-1"},
                        "Missing required option: '--reason"),
                Arguments.of(new String[] {"close", "--tenant", "acme", "--month", "June"},
                        "--month must be a month YYYY-MM"),
                Arguments.of(new String[] {"close", "--tenant", "acme"}, "Missing required option: '--month"),
                Arguments.of(new String[] {"close", "--tenant", "x' OR '1'='1", "--month", "2025-06"}, "--tenant"),
                Arguments.of(new String[] {}, "say what to do: invoice show, invoice close or invoice adjust"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("refusedBeforeSending")
    void bad_arguments_are_one_line_and_exit_2_and_nothing_is_sent(String[] args, String says) {
        GpucloudCliTest.Result r = cli(args);
        assertThat(r.code()).isEqualTo(2);
        GpucloudCliTest.assertOneLineError(r, says);
        assertThat(billing.requests).isEmpty();
    }

    @Test
    void a_refusal_is_billings_message_in_one_line_and_exit_1() {
        billing.answering(409, "{\"error\": \"conflict\", \"parameter\": \"month\", \"message\": \"the invoice of acme"
                + " for 2026-12 cannot close yet: the month ends at 2027-01-01T00:00:00Z (UTC)\"}");
        GpucloudCliTest.Result r = cli("close", "--tenant", "acme", "--month", "2026-12");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "billing refused it, HTTP 409 (month): the invoice of acme for 2026-12"
                + " cannot close yet");

        billing.answering(403, "{\"error\": \"forbidden\", \"parameter\": \"Authorization\", \"message\": \"'ops'"
                + " (operator) may not book adjustments on invoices: that takes the role finance\"}");
        r = cli("adjust", "--tenant", "acme", "--amount", "-1", "--reason", "x");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "HTTP 403 (Authorization)", "that takes the role finance");
    }

    @Test
    void billing_out_of_reach_says_where_it_was_looked_for() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = GpucloudCli.run(new String[] {"--profile", "fin", "invoice", "--billing", "http://127.0.0.1:" + closed,
            "close", "--tenant", "acme", "--month", "2025-06"}, new PrintWriter(out), new PrintWriter(err));
        assertThat(code).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(new GpucloudCliTest.Result(code, out.toString(), err.toString()),
                "cannot reach billing at http://127.0.0.1:" + closed, "--billing (env GPUCLOUD_BILLING)");
    }

    @Test
    void a_billing_url_that_is_not_one_is_refused() {
        StringWriter err = new StringWriter();
        int code = GpucloudCli.run(new String[] {"invoice", "--billing", "localhost:8082", "close", "--tenant", "acme",
            "--month", "2025-06"}, new PrintWriter(new StringWriter()), new PrintWriter(err));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("--billing must be billing's http(s) URL");
    }

    static final String INVOICE = """
            {"tenant": "acme", "month": "2025-06", "status": "OPEN", "currency": "USD",
             "lines": [{"jobId": "job-1", "sku": "A100-SXM4-40GB", "capacityType": "ON_DEMAND", "seconds": 130,
                        "rateMicrosPerHour": 2745000, "amountMicros": 99125}],
             "adjustments": [{"adjustmentId": 3, "amountMicros": -50000, "reason": "SLA credit"}],
             "totalMicros": 49125, "total": "0.05"}""";

    @Test
    void show_gets_the_month_and_prints_its_lines_adjustments_and_total_as_a_table_or_every_field() throws Exception {
        billing.answering(200, INVOICE);
        GpucloudCliTest.Result r = cli("show", "acme", "2025-06");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(billing.requests).singleElement().satisfies(request -> {
            assertThat(request.method()).isEqualTo("GET");
            assertThat(request.path()).isEqualTo("/invoices/acme/2025-06");
            assertThat(request.authorization()).isEqualTo("Bearer fin.token.jwt");
        });
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).isEqualTo("invoice acme 2025-06 (OPEN)");
        assertThat(lines.get(1)).startsWith("JOB").contains("SKU", "CAPACITY", "SKU-SECONDS", "USD/SKU-HOUR", "USD");
        assertThat(lines.get(2)).startsWith("job-1").contains("A100-SXM4-40GB", "130", "2.7450", "0.099125");
        assertThat(lines.get(3)).isEqualTo("adjustment 3 by finance: -0.050000 USD (SLA credit)");
        assertThat(lines.get(4)).isEqualTo("total: 0.05 USD");
        assertThat(cli("show", "acme", "2025-06", "-o", "wide").out()).contains("RATE-FROM", "FLAG");
        assertThat(cli("show", "acme", "2025-06", "--no-headers").out().lines().findFirst().orElseThrow())
                .startsWith("job-1");
        assertThat(cli("show", "acme", "2025-06", "-o", "json").out()).isEqualTo(INVOICE + "\n");
        JsonNode yaml = new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                .readTree(cli("show", "acme", "2025-06", "-o", "yaml").out());
        assertThat(yaml).isEqualTo(JSON.readTree(INVOICE));
    }

    @Test
    void show_refuses_a_bad_tenant_month_or_output_before_asking_billing() {
        assertThat(cli("show", "Acme!", "2025-06").err()).startsWith("error: ").contains("TENANT");
        assertThat(cli("show", "acme", "2025-13").err()).contains("YYYY-MM must be a month YYYY-MM");
        assertThat(cli("show", "acme", "-o", "csv").err()).contains("'csv' is not one of text, wide, json, yaml");
        assertThat(billing.requests).isEmpty();
    }
}
