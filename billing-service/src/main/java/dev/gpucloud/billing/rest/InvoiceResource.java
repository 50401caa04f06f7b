package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.fold.InvoiceLine;
import dev.gpucloud.billing.fold.InvoiceStatement;
import dev.gpucloud.billing.repository.InvoiceBook;
import dev.gpucloud.contracts.events.Tenants;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Invoices over HTTP. Every request carries a bearer token whose caller must be allowed the path's tenant
 * ({@link Access}: its members and tenant-admins, finance, operators) before anything is read; the tenant is
 * also in every query below, so a request can only ever read that tenant's usage.
 */
@Path("/invoices")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Invoices", description = "Per-second GPU usage, rated, per tenant and calendar month (UTC)")
@APIResponse(responseCode = "401", description = "No bearer token, or one that is not valid here",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
@APIResponse(responseCode = "403", description = "The caller may not read the path's tenant",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
@APIResponse(responseCode = "400", description = "A bad tenant or month; the error names which",
        content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
public class InvoiceResource {

    private static final Pattern MONTH = Pattern.compile("[0-9]{4}-[0-9]{2}");

    private final InvoiceBook book;
    private final Access access;

    public InvoiceResource(InvoiceBook book, Access access) {
        this.book = book;
        this.access = access;
    }

    @GET
    @Path("/{tenant}")
    @Operation(summary = "A tenant's invoice for one month, or, without month, the months it has invoices in",
            description = "With ?month=YYYY-MM: the invoice (OPEN or CLOSED) with a line per job, SKU and capacity "
                    + "type, and the adjustments it carries for closed months; a month without usage is an empty "
                    + "invoice. Without month: the list of months, and which are closed.")
    @APIResponse(responseCode = "200", description = "The invoice (with month) or the list of months (without)",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(oneOf = {InvoiceView.class, InvoiceMonthsView.class})))
    public Uni<Response> invoice(
            @Parameter(description = "Tenant id: 1..63 lower-case letters, digits or dashes", example = "acme")
            @PathParam("tenant") String tenant,
            @Parameter(description = "Calendar month in UTC, YYYY-MM", example = "2025-06")
            @QueryParam("month") String month,
            @Context UriInfo uri) {
        if (month == null && uri.getQueryParameters().containsKey("month")) {
            month = ""; // "?month=" asks for a month and gives none: an error, not the list of months
        }
        if (month == null) {
            return checked(tenant, () -> book.months(tenant).map(months -> Response.ok(new InvoiceMonthsView(tenant,
                    months.keySet().stream().map(YearMonth::toString).toList(),
                    months.entrySet().stream().filter(e -> e.getValue()).map(e -> e.getKey().toString()).toList()))
                    .build()));
        }
        return withStatement(tenant, month, statement -> Response.ok(InvoiceView.of(statement)).build());
    }

    @GET
    @Path("/{tenant}/{month}")
    @Operation(summary = "A tenant's invoice for one month (the same as ?month=)")
    @APIResponse(responseCode = "200", description = "The invoice",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = InvoiceView.class)))
    public Uni<Response> invoiceOfMonth(@PathParam("tenant") String tenant, @PathParam("month") String month) {
        return withStatement(tenant, month, statement -> Response.ok(InvoiceView.of(statement)).build());
    }

    @GET
    @Path("/{tenant}/{month}/lines")
    @Operation(summary = "The lines of a tenant's invoice for one month, without the adjustments")
    @APIResponse(responseCode = "200", description = "The lines",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(type = org.eclipse.microprofile.openapi.annotations.enums.SchemaType.ARRAY,
                            implementation = InvoiceLineView.class)))
    public Uni<Response> lines(@PathParam("tenant") String tenant, @PathParam("month") String month) {
        return withStatement(tenant, month, statement -> Response.ok(
                statement.lines().stream().map(InvoiceLineView::of).toList()).build());
    }

    @GET
    @Path("/{tenant}/{month}/csv")
    @Produces({"text/csv", MediaType.APPLICATION_JSON})
    @Operation(summary = "A tenant's invoice for one month as CSV",
            description = "A header, a row per line (USAGE) and per adjustment (ADJUSTMENT), and a TOTAL row; "
                    + "amounts in micro-USD")
    @APIResponse(responseCode = "200", description = "The invoice as CSV", content = @Content(mediaType = "text/csv"))
    public Uni<Response> csv(@PathParam("tenant") String tenant, @PathParam("month") String month) {
        return withStatement(tenant, month, statement -> Response.ok(InvoiceCsv.of(statement))
                .type("text/csv; charset=UTF-8")
                .header("Content-Disposition", "attachment; filename=\"invoice-" + tenant + "-" + month + ".csv\"")
                .build());
    }

    @GET
    @Path("/{tenant}/current")
    @Operation(summary = "The running cost of the tenant's current month (UTC), priced now")
    @APIResponse(responseCode = "200", description = "The cost so far",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = RunningCostView.class)))
    public Uni<Response> current(@PathParam("tenant") String tenant) {
        Instant now = Instant.now();
        YearMonth month = YearMonth.from(now.atOffset(ZoneOffset.UTC));
        return withStatement(tenant, month.toString(), statement -> {
            long seconds = statement.lines().stream().mapToLong(InvoiceLine::seconds).sum();
            return Response.ok(new RunningCostView(tenant, month.toString(), statement.status(), now.toString(),
                    seconds, statement.totalMicros(), statement.totalUsd())).build();
        });
    }

    private Uni<Response> withStatement(String tenant, String month, Function<InvoiceStatement, Response> render) {
        return checked(tenant, () -> {
            YearMonth yearMonth;
            try {
                yearMonth = parseMonth(month);
            } catch (IllegalArgumentException e) {
                return badRequest("month", e.getMessage());
            }
            return book.statement(tenant, yearMonth).map(render);
        });
    }

    /** The caller must be allowed (401/403) and the tenant valid (400), before anything is read. */
    private Uni<Response> checked(String tenant, java.util.function.Supplier<Uni<Response>> then) {
        return access.readingInvoicesOf(tenant, () -> {
            try {
                Tenants.require(tenant, "tenant");
            } catch (IllegalArgumentException e) {
                return badRequest("tenant", e.getMessage().replace("field 'tenant'", "parameter 'tenant'"));
            }
            return then.get();
        });
    }

    /** A month as YYYY-MM; anything else names the parameter and quotes (a clipped copy of) the value. */
    static YearMonth parseMonth(String month) {
        if (month != null && MONTH.matcher(month).matches()) {
            try {
                return YearMonth.parse(month);
            } catch (DateTimeException e) {
                // falls through to the error below
            }
        }
        throw new IllegalArgumentException("parameter 'month' must be a month YYYY-MM (e.g. 2025-06), was '"
                + clip(String.valueOf(month)) + "'");
    }

    static Uni<Response> badRequest(String parameter, String message) {
        return Uni.createFrom().item(ApiError.badParameter(parameter, message).toResponse(Response.Status.BAD_REQUEST));
    }

    private static String clip(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
