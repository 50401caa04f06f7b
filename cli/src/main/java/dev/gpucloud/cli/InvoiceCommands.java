package dev.gpucloud.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.limits.Limits;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.DateTimeException;
import java.time.YearMonth;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Finance's invoice commands: close a tenant's month ahead of its grace period, and book a manual adjustment (a
 * credit or a debit) on its open invoice, through billing's REST API with the profile's token. Reading an invoice
 * stays with {@code ./gpucloud invoice TENANT [MONTH]}.
 */
@Command(name = "invoice", mixinStandardHelpOptions = true, description = {"Read an invoice (show); close invoices and"
        + " book manual adjustments (the role finance).",
        "./gpucloud invoice TENANT [YYYY-MM] reads one too."},
        subcommands = {InvoiceCommands.Show.class, InvoiceCommands.Close.class, InvoiceCommands.Adjust.class})
final class InvoiceCommands implements Callable<Integer> {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern MONTH = Pattern.compile("[0-9]{4}-[0-9]{2}");
    /** USD as people type it: a sign, whole dollars, and at most six decimals (a micro-USD); no exponent. */
    private static final Pattern USD = Pattern.compile("[+-]?[0-9]{1,13}(\\.[0-9]{1,6})?");

    @CommandLine.ParentCommand
    GpucloudCli parent;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--billing", defaultValue = "${env:GPUCLOUD_BILLING:-http://localhost:8082}", paramLabel = "URL",
            description = "Billing's URL (default: ${DEFAULT-VALUE}; env GPUCLOUD_BILLING, which ./gpucloud sets);"
                    + " https is checked against the JVM's CAs and --ca-file's.")
    String billing;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "say what to do: invoice show, invoice close or"
                + " invoice adjust");
    }

    /** Billing's API as the profile's user. */
    BillingApi api() {
        java.net.URI base;
        try {
            base = BillingApi.baseUri(billing);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        return new BillingApi(Identity.httpClient(parent.caFile, spec), base,
                Identity.token(parent.profile, parent.caFile, spec.commandLine().getErr()));
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = {
            "A tenant's invoice for a month (default: this month, UTC): a line per job and SKU, the adjustments, the",
            "total. For the tenant's members, finance and operators."})
    static class Show implements Callable<Integer> {
        @CommandLine.ParentCommand
        InvoiceCommands invoice;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @CommandLine.Parameters(index = "0", paramLabel = "TENANT")
        String tenant;
        @CommandLine.Parameters(index = "1", arity = "0..1", paramLabel = "YYYY-MM")
        String month;
        /** text or wide (the lines as a table), json (billing's answer as it is) or yaml. */
        @CommandLine.Mixin
        Output output;

        @Override
        public Integer call() {
            Output.Format format = output.format(Output.Format.values());
            tenant(tenant, "TENANT", spec);
            String when = month == null ? YearMonth.now(java.time.ZoneOffset.UTC).toString() : month;
            month(when, "YYYY-MM", spec);
            BillingApi.Answer answer = invoice.api().get("/invoices/" + tenant + "/" + when);
            PrintWriter out = spec.commandLine().getOut();
            if (format == Output.Format.JSON) {
                out.println(answer.text());
                return 0;
            }
            if (format == Output.Format.YAML) {
                out.print(output.document(answer.body()));
                return 0;
            }
            JsonNode inv = answer.body();
            boolean wide = format == Output.Format.WIDE;
            if (!output.noHeaders) {
                out.println("invoice " + inv.path("tenant").asText() + " " + inv.path("month").asText() + " ("
                        + inv.path("status").asText() + (inv.hasNonNull("closedAt") ? ", closed "
                        + inv.path("closedAt").asText() : "") + ")");
            }
            Output.Table lines = wide
                    ? new Output.Table("JOB", "SKU", "CAPACITY", "SKU-SECONDS", "USD/SKU-HOUR", "USD", "RATE-FROM", "FLAG")
                    : new Output.Table("JOB", "SKU", "CAPACITY", "SKU-SECONDS", "USD/SKU-HOUR", "USD");
            for (JsonNode l : inv.path("lines")) {
                String rate = usd(l.path("rateMicrosPerHour").asLong(), 4);
                String amount = usd(l.path("amountMicros").asLong(), 6);
                if (wide) {
                    lines.row(l.path("jobId").asText(), l.path("sku").asText(), l.path("capacityType").asText(),
                            l.path("seconds").asLong(), rate, amount, l.path("rateFrom").asText(""),
                            l.path("flag").asText(""));
                } else {
                    lines.row(l.path("jobId").asText(), l.path("sku").asText(), l.path("capacityType").asText(),
                            l.path("seconds").asLong(), rate, amount);
                }
            }
            output.print(out, lines);
            for (JsonNode a : inv.path("adjustments")) {
                String amount = usd(a.path("amountMicros").asLong(), 6);
                out.println(a.hasNonNull("adjustmentId") && !a.hasNonNull("jobId")
                        ? "adjustment " + a.path("adjustmentId").asText() + " by finance: " + amount + " USD ("
                                + a.path("reason").asText() + ")"
                        : "adjustment for " + a.path("forMonth").asText() + ": " + a.path("jobId").asText() + " "
                                + a.path("sku").asText() + " " + a.path("seconds").asLong() + " s " + amount + " USD ("
                                + a.path("reason").asText() + ")");
            }
            if (!output.noHeaders) {
                out.println("total: " + inv.path("total").asText() + " USD");
            }
            out.flush();
            return 0;
        }

        private static String usd(long micros, int decimals) {
            return BigDecimal.valueOf(micros, 6).setScale(decimals, java.math.RoundingMode.HALF_EVEN).toPlainString();
        }
    }

    @Command(name = "close", mixinStandardHelpOptions = true, description = {
            "Close a tenant's invoice for a month that has ended, now rather than when",
            "its grace period is over. Closing a closed month changes nothing. Finance only."})
    static class Close implements Callable<Integer> {
        @CommandLine.ParentCommand
        InvoiceCommands invoice;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--tenant", required = true, description = "The tenant.")
        String tenant;
        @Option(names = "--month", required = true, paramLabel = "YYYY-MM", description = "The month (UTC), ended.")
        String month;
        /** text, or json or yaml: billing's answer as it is (docs/api.md). */
        @CommandLine.Mixin
        Output output;

        @Override
        public Integer call() {
            output.format(Output.Format.TEXT, Output.Format.JSON, Output.Format.YAML);
            tenant(tenant, spec);
            month(month, spec);
            BillingApi.Answer answer = invoice.api().post("/invoices/" + tenant + "/" + month + "/close", Map.of(), null,
                    "");
            PrintWriter out = spec.commandLine().getOut();
            if (output.format == Output.Format.JSON) {
                out.println(answer.text());
                return 0;
            }
            if (output.format == Output.Format.YAML) {
                out.print(output.document(answer.body()));
                return 0;
            }
            JsonNode frozen = answer.body().path("invoice");
            out.println(answer.body().path("message").asText() + ": total " + frozen.path("total").asText() + " USD ("
                    + frozen.path("totalMicros").asLong() + " micro-USD), " + frozen.path("lines").size() + " line(s), "
                    + frozen.path("adjustments").size() + " adjustment(s), closed at " + frozen.path("closedAt").asText());
            return 0;
        }
    }

    @Command(name = "adjust", mixinStandardHelpOptions = true, description = {
            "Book a manual adjustment on a tenant's open invoice: a credit (a negative",
            "--amount, e.g. an SLA credit) or a debit, with the reason the tenant reads.",
            "It goes on --month, or else on the earliest month not closed. The same",
            "--idempotency-key with the same request never books twice. Finance only."})
    static class Adjust implements Callable<Integer> {
        @CommandLine.ParentCommand
        InvoiceCommands invoice;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--tenant", required = true, description = "The tenant.")
        String tenant;
        @Option(names = "--amount", required = true, paramLabel = "USD",
                description = "In USD, at most 6 decimals, e.g. -12.50 (negative: a credit); up to 1,000,000 either way.")
        String amount;
        @Option(names = "--reason", required = true, description = "What the tenant reads on the invoice (1..500"
                + " characters, one line).")
        String reason;
        @Option(names = "--month", paramLabel = "YYYY-MM", description = "The open month to book it on (default: the"
                + " earliest month not closed).")
        String month;
        @Option(names = "--idempotency-key", paramLabel = "KEY", description = "The adjustment's key (letters, digits,"
                + " . _ : -; default: a new random one, printed). The same key with the same request books nothing"
                + " twice: use it to retry.")
        String key;
        /** text, or json or yaml: billing's answer as it is (docs/api.md). */
        @CommandLine.Mixin
        Output output;

        @Override
        public Integer call() {
            output.format(Output.Format.TEXT, Output.Format.JSON, Output.Format.YAML);
            tenant(tenant, spec);
            long micros = micros(amount, spec);
            if (month != null) {
                month(month, spec);
            }
            boolean generated = key == null;
            String idempotencyKey = generated ? UUID.randomUUID().toString() : key;
            ObjectNode body = JSON.createObjectNode().put("amountMicros", micros).put("reason", reason);
            if (month != null) {
                body.put("month", month);
            }
            String retry = "; whether it was booked is not known: run the same command with --idempotency-key "
                    + idempotencyKey + " to find out, which never books it twice";
            BillingApi.Answer answer = invoice.api().post("/invoices/" + tenant + "/adjustments",
                    Map.of("Idempotency-Key", idempotencyKey), body.toString(), retry);
            PrintWriter out = spec.commandLine().getOut();
            if (output.format == Output.Format.JSON) {
                out.println(answer.text());
                return 0;
            }
            if (output.format == Output.Format.YAML) {
                out.print(output.document(answer.body()));
                return 0;
            }
            JsonNode booked = answer.body();
            String what = booked.path("amountUsd").asText() + " USD on the invoice of " + booked.path("tenant").asText()
                    + " for " + booked.path("month").asText() + " (" + booked.path("reason").asText() + ")";
            if (booked.path("repeated").asBoolean()) {
                out.println("adjustment " + booked.path("id").asLong() + " was booked before under idempotency key "
                        + idempotencyKey + ", on " + booked.path("bookedAt").asText() + " by "
                        + booked.path("bookedBy").asText() + ": " + what + "; nothing new booked");
            } else {
                out.println("booked adjustment " + booked.path("id").asLong() + ": " + what + "; idempotency key "
                        + idempotencyKey + (generated ? " (generated: give it as --idempotency-key to retry safely)"
                        : ""));
            }
            return 0;
        }
    }

    /** USD as typed, in micro-USD, exactly: "-12.50" is -12,500,000; anything BigDecimal would round is refused. */
    static long micros(String usd, CommandLine.Model.CommandSpec spec) {
        String text = usd == null ? "" : usd.strip();
        if (!USD.matcher(text).matches()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--amount must be USD such as -12.50 or 100"
                    + " (at most 6 decimals, no exponent or thousands separator; negative: a credit), was '"
                    + GpucloudCli.clip(text, 40) + "'");
        }
        long micros = new BigDecimal(text).movePointRight(6).longValueExact();
        if (micros == 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--amount must not be 0");
        }
        if (micros < Limits.ADJUSTMENT_AMOUNT.min() || micros > Limits.ADJUSTMENT_AMOUNT.max()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--amount must be within "
                    + BigDecimal.valueOf(Limits.ADJUSTMENT_AMOUNT.min(), 6).toBigInteger() + ".."
                    + BigDecimal.valueOf(Limits.ADJUSTMENT_AMOUNT.max(), 6).toBigInteger() + " USD, was " + text
                    + " (book a larger correction in parts)");
        }
        return micros;
    }

    static void tenant(String tenant, CommandLine.Model.CommandSpec spec) {
        tenant(tenant, "--tenant", spec);
    }

    static void tenant(String tenant, String name, CommandLine.Model.CommandSpec spec) {
        try {
            Tenants.require(tenant, "tenant");
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage().replace("field 'tenant'",
                    name));
        }
    }

    static void month(String month, CommandLine.Model.CommandSpec spec) {
        month(month, "--month", spec);
    }

    static void month(String month, String name, CommandLine.Model.CommandSpec spec) {
        if (month != null && MONTH.matcher(month).matches()) {
            try {
                YearMonth.parse(month);
                return;
            } catch (DateTimeException e) {
                // said below
            }
        }
        throw new CommandLine.ParameterException(spec.commandLine(), name + " must be a month YYYY-MM (e.g. 2025-06),"
                + " was '" + GpucloudCli.clip(String.valueOf(month), 40) + "'");
    }
}
