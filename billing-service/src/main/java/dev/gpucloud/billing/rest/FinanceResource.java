package dev.gpucloud.billing.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.InvoiceClosing;
import dev.gpucloud.billing.fold.ManualAdjustment;
import dev.gpucloud.billing.messaging.AuditTrail;
import dev.gpucloud.billing.repository.AdjustmentBook;
import dev.gpucloud.billing.repository.InvoiceBook;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.identity.AuditEntries;
import dev.gpucloud.identity.Caller;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * What finance changes on invoices, for every tenant: closing a month that has ended ahead of its grace period, and
 * booking manual adjustments (credits such as SLA credits, or debits) on an open invoice. Only finance may (a
 * member, tenant-admin or operator gets 403 naming the role); every attempt, accepted or refused, leaves one record
 * on {@code audit.events} ({@code billing.invoice.close}, {@code billing.invoice.adjust}) with the path's tenant.
 */
@Path("/invoices")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Invoices")
@APIResponse(responseCode = "401", description = "No bearer token, or one that is not valid here",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
@APIResponse(responseCode = "403", description = "The caller does not have the role finance",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
@APIResponse(responseCode = "400", description = "Bad input; the error names the parameter, header or field",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
@APIResponse(responseCode = "409", description = "Not possible now; the error says why",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
public class FinanceResource {

    /** The actions these calls are audited as. */
    static final String CLOSE_ACTION = "billing.invoice.close";
    static final String ADJUST_ACTION = "billing.invoice.adjust";
    /** The header that carries the client's idempotency key (draft-ietf-httpapi-idempotency-key-header). */
    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    /** The longest body an adjustment takes: its three fields, escaped, fit many times over. */
    static final int MAX_BODY = 8192;
    private static final Set<String> FIELDS = Set.of("amountMicros", "reason", "month");
    /** No month before the service's epoch: nothing was billed then. */
    private static final YearMonth FIRST_MONTH = YearMonth.from(Limits.EPOCH.atOffset(ZoneOffset.UTC));
    /** Duplicate keys are refused, not resolved: {"amountMicros": -1, "amountMicros": -1000000} is ambiguous. */
    private static final JsonMapper JSON = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private final InvoiceBook invoices;
    private final AdjustmentBook adjustments;
    private final Access access;
    private final AuditTrail audit;

    public FinanceResource(InvoiceBook invoices, AdjustmentBook adjustments, Access access, AuditTrail audit) {
        this.invoices = invoices;
        this.adjustments = adjustments;
        this.access = access;
        this.audit = audit;
    }

    @POST
    @Path("/{tenant}/{month}/close")
    @Operation(summary = "Close a tenant's invoice for a month that has ended (finance only)",
            description = "Prices the month one last time, with the adjustments it carries, and freezes it, as the "
                    + "service does by itself once the month's grace period is over. Closing a closed month changes "
                    + "nothing and answers the frozen invoice with closedNow false. The current or a future month "
                    + "is a 409 that says when it closes by itself.")
    @APIResponse(responseCode = "200", description = "Closed now, or closed already (closedNow says which)",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ClosingView.class)))
    public Uni<Response> close(
            @Parameter(description = "Tenant id: 1..63 lower-case letters, digits or dashes", example = "acme")
            @PathParam("tenant") String tenant,
            @Parameter(description = "Calendar month in UTC, YYYY-MM, ended", example = "2025-06")
            @PathParam("month") String month,
            @Context HttpServerRequest request) {
        String target = AuditEntries.tenantOrNone(tenant).isEmpty() ? "invoice"
                : "invoice " + tenant + " " + Check.clip(month);
        return audited(CLOSE_ACTION, tenant, target, request, caller -> access.asFinance("close invoices",
                seen -> caller[0] = seen, () -> closeChecked(tenant, month)));
    }

    private Uni<Response> closeChecked(String tenant, String month) {
        Response bad = badTenant(tenant);
        if (bad != null) {
            return Uni.createFrom().item(bad);
        }
        YearMonth yearMonth;
        try {
            yearMonth = billableMonth(InvoiceResource.parseMonth(month), "parameter");
        } catch (IllegalArgumentException e) {
            return InvoiceResource.badRequest("month", e.getMessage());
        }
        Instant now = Instant.now();
        if (!InvoiceClosing.hasEnded(yearMonth, now)) {
            InvoiceClosing closing = invoices.closing();
            return Uni.createFrom().item(ApiError.conflict("month", "the invoice of " + tenant + " for " + yearMonth
                    + " cannot close yet: the month ends at " + Interval.month(yearMonth).to()
                    + " (UTC), and only an ended month may close; it closes by itself at "
                    + closing.closesAt(yearMonth) + ", gpucloud.billing.close-grace (" + closing.grace()
                    + ") after its end").toResponse(Response.Status.CONFLICT));
        }
        return invoices.close(tenant, yearMonth).flatMap(closedNow -> invoices.statement(tenant, yearMonth)
                .map(statement -> Response.ok(new ClosingView(closedNow, (closedNow ? "closed" : "already closed at "
                        + statement.closedAt() + ", nothing changed:") + " the invoice of " + tenant + " for "
                        + yearMonth, InvoiceView.of(statement))).build()));
    }

    @POST
    @Path("/{tenant}/adjustments")
    @Operation(summary = "Book a manual adjustment on a tenant's open invoice (finance only)",
            description = "A credit (negative amountMicros, e.g. an SLA credit) or a debit, with the reason the tenant "
                    + "reads on the invoice. It goes on the month given, which must not be closed, or by default on "
                    + "the earliest month not closed (the tenant's next invoice). The Idempotency-Key header is "
                    + "required: a repeat with the same key and body answers the same adjustment (200, repeated) "
                    + "and books nothing; the key with another body is a 409.")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = NewAdjustment.class)))
    @APIResponse(responseCode = "201", description = "Booked",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AdjustmentView.class)))
    @APIResponse(responseCode = "200", description = "A repeat: what the first request with this key booked",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AdjustmentView.class)))
    public Uni<Response> adjust(
            @Parameter(description = "Tenant id", example = "acme") @PathParam("tenant") String tenant,
            @Parameter(in = ParameterIn.HEADER, name = IDEMPOTENCY_KEY, required = true, description = "The client's "
                    + "key for this adjustment: 1..128 letters, digits, '.', '_', ':' or '-'; a new one per adjustment",
                    example = "3f1c2a9e-5b7d-4c1e-9f00-2a6b8d7e1c44")
            @HeaderParam(IDEMPOTENCY_KEY) String key,
            String body,
            @Context HttpServerRequest request) {
        String target = key != null && key.length() <= Limits.IDEMPOTENCY_KEY.max() ? "adjustment key " + key
                : "adjustment";
        return audited(ADJUST_ACTION, tenant, target, request, caller -> access.asFinance(
                "book adjustments on invoices", seen -> caller[0] = seen, () -> adjustChecked(tenant, key, body,
                        caller[0])));
    }

    /** The body of an adjustment. */
    @Schema(name = "NewAdjustment")
    public record NewAdjustment(
            @Schema(required = true, description = "Micro-USD, not 0, at most 1,000,000 USD either way; negative: a "
                    + "credit", example = "-12500000") long amountMicros,
            @Schema(required = true, description = "What the tenant reads on the invoice: 1..500 characters, no "
                    + "control characters", example = "SLA credit: 4 h of downtime on 2025-07-03") String reason,
            @Schema(description = "The open month (YYYY-MM, UTC) to book it on; default: the earliest month not closed",
                    example = "2025-07") String month) {
    }

    private Uni<Response> adjustChecked(String tenant, String key, String body, Caller caller) {
        Response bad = badTenant(tenant);
        if (bad != null) {
            return Uni.createFrom().item(bad);
        }
        AdjustmentBook.Request asked;
        try {
            field(IDEMPOTENCY_KEY, () -> ManualAdjustment.idempotencyKey(key));
            JsonNode node = parse(body);
            YearMonth now = YearMonth.now(ZoneOffset.UTC);
            YearMonth month = node.hasNonNull("month") ? field("month", () -> month(node.get("month"), now)) : null;
            asked = new AdjustmentBook.Request(key, tenant, month, field("amountMicros", () -> amount(node)),
                    field("reason", () -> reason(node)), caller.subject());
        } catch (BadField e) {
            return InvoiceResource.badRequest(e.field, e.getMessage());
        }
        return adjustments.book(asked, Instant.now()).map(booking -> answer(tenant, key, booking));
    }

    /** The answer to a booking: 201 booked, 200 a repeat, 409 a key used for another request or a closed month. */
    private static Response answer(String tenant, String key, AdjustmentBook.Booking booking) {
        if (booking instanceof AdjustmentBook.Booked booked) {
            return Response.created(URI.create("/invoices/" + tenant + "/" + booked.adjustment().month()))
                    .entity(AdjustmentView.of(booked.adjustment(), false)).build();
        }
        if (booking instanceof AdjustmentBook.Repeated repeated) {
            return Response.ok(AdjustmentView.of(repeated.adjustment(), true)).header("Idempotent-Replayed", "true")
                    .build();
        }
        if (booking instanceof AdjustmentBook.KeyTaken taken) {
            ManualAdjustment earlier = taken.earlier();
            return ApiError.conflict(IDEMPOTENCY_KEY, "idempotency key '" + key + "' was used on " + earlier.bookedAt()
                    + " for adjustment " + earlier.id() + " (" + earlier.tenant() + " " + earlier.month() + ", "
                    + earlier.amountMicros() + " micro-USD), and this request differs from that one in its tenant,"
                    + " month, amount or reason; a new adjustment needs a new key").toResponse(Response.Status.CONFLICT);
        }
        AdjustmentBook.MonthClosed closed = (AdjustmentBook.MonthClosed) booking;
        return ApiError.conflict("month", "the invoice of " + tenant + " for " + closed.month() + " closed at "
                + closed.closedAt() + " and never changes: book the adjustment on an open month, or leave month out"
                + " for the earliest open one").toResponse(Response.Status.CONFLICT);
    }

    /**
     * Runs {@code call} and hands one audit record of how it ended to the trail: accepted or refused, by whom (once
     * the token is verified), for the path's tenant where it is one.
     */
    private Uni<Response> audited(String action, String tenant, String target, HttpServerRequest request,
            Function<Caller[], Uni<Response>> call) {
        Caller[] caller = {null};
        String from = AuditResults.from(request);
        return call.apply(caller)
                .invoke(response -> audit.record(AuditEntries.of(caller[0], tenant, action, targetOf(target, response),
                        Instant.now(), from, AuditResults.result(response), reasonOf(response))))
                .onFailure().invoke(failure -> audit.record(AuditEntries.of(caller[0], tenant, action, target,
                        Instant.now(), from, "INTERNAL", "internal error; see billing's log")));
    }

    /** An accepted call names what it changed; a refused one what it tried to. */
    private static String targetOf(String asked, Response response) {
        if (response.getEntity() instanceof AdjustmentView booked) {
            // the amount and month first: gpucloud audit's table shows a target's first 28 characters
            java.math.BigDecimal usd = java.math.BigDecimal.valueOf(booked.amountMicros(), 6).stripTrailingZeros();
            return (usd.scale() < 2 ? usd.setScale(2) : usd).toPlainString() + " USD on " + booked.month()
                    + " (adjustment " + booked.id() + ")";
        }
        return asked;
    }

    /** A refusal's message; for a call that changed nothing though accepted (a repeat), why. */
    private static String reasonOf(Response response) {
        if (response.getEntity() instanceof AdjustmentView booked && booked.repeated()) {
            return "a repeat of key " + booked.idempotencyKey() + ": nothing new booked";
        }
        if (response.getEntity() instanceof ClosingView closing && !closing.closedNow()) {
            return closing.message();
        }
        return AuditResults.reason(response);
    }

    private static Response badTenant(String tenant) {
        try {
            Tenants.require(tenant, "tenant");
            return null;
        } catch (IllegalArgumentException e) {
            return ApiError.badParameter("tenant", e.getMessage().replace("field 'tenant'", "parameter 'tenant'"))
                    .toResponse(Response.Status.BAD_REQUEST);
        }
    }

    /** A month billing could have billed: from the service's epoch on. */
    private static YearMonth billableMonth(YearMonth month, String kind) {
        if (month.isBefore(FIRST_MONTH)) {
            throw new IllegalArgumentException(kind + " 'month' must be " + FIRST_MONTH + " or later, was '" + month
                    + "'");
        }
        return month;
    }

    /** The body's month: YYYY-MM, from the epoch on, and not after the current month (no invoice exists yet). */
    private static YearMonth month(JsonNode value, YearMonth now) {
        if (!value.isTextual()) {
            throw new IllegalArgumentException("field 'month' must be a month YYYY-MM (a string, e.g. \"2025-06\")");
        }
        YearMonth month;
        try {
            month = InvoiceResource.parseMonth(value.asText());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().replace("parameter 'month'", "field 'month'"));
        }
        billableMonth(month, "field");
        if (month.isAfter(now)) {
            throw new IllegalArgumentException("field 'month' must not be after the current month (" + now + "), was '"
                    + month + "': its invoice does not exist yet");
        }
        return month;
    }

    private static String reason(JsonNode node) {
        JsonNode value = node.get("reason");
        if (value != null && !value.isNull() && !value.isTextual()) {
            throw new IllegalArgumentException("field 'reason' must be a string, was " + Check.clip(value.toString()));
        }
        return ManualAdjustment.reason(value == null || value.isNull() ? null : value.asText());
    }

    private static long amount(JsonNode node) {
        JsonNode value = node.get("amountMicros");
        if (value == null || value.isNull()) {
            throw new IllegalArgumentException("missing required field 'amountMicros' (signed micro-USD; negative: a"
                    + " credit)");
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw new IllegalArgumentException("field 'amountMicros' must be a whole number of micro-USD (1 USD ="
                    + " 1000000; negative: a credit), was " + Check.clip(value.toString()));
        }
        return ManualAdjustment.amount(value.asLong());
    }

    /** The body as a JSON object of known fields only, each at most once. */
    private static JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            throw new BadField("body", "the body must be a JSON object with amountMicros and reason (and month)");
        }
        if (body.length() > MAX_BODY) {
            throw new BadField("body", "the body must be at most " + MAX_BODY + " characters, was " + body.length());
        }
        JsonNode node;
        try {
            node = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new BadField("body", "the body is not valid JSON: " + Check.reason(e.getOriginalMessage()));
        }
        if (node == null || !node.isObject()) {
            throw new BadField("body", "the body must be a JSON object with amountMicros and reason (and month)");
        }
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                throw new BadField(Check.clip(name), "field '" + Check.clip(name) + "' is not known: an adjustment"
                        + " takes amountMicros, reason and month");
            }
        }
        return node;
    }

    /** A check whose failure is a 400 naming {@code field}. */
    private static <T> T field(String field, Supplier<T> check) {
        try {
            return check.get();
        } catch (IllegalArgumentException e) {
            throw new BadField(field, e.getMessage());
        }
    }

    private static final class BadField extends RuntimeException {
        final String field;

        BadField(String field, String message) {
            super(message, null, false, false);
            this.field = field;
        }
    }
}
