package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.fold.Invoice;
import dev.gpucloud.billing.fold.InvoiceCalculator;
import dev.gpucloud.billing.repository.UsageHistory;
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
import java.time.YearMonth;
import java.util.regex.Pattern;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Invoices over HTTP. The tenant is in the path and in every query below it, so a request can only ever
 * read that tenant's usage; once authentication arrives, the caller's tenant must equal the path's.
 */
@Path("/invoices")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Invoices", description = "Per-second GPU usage, rated, per tenant and calendar month (UTC)")
public class InvoiceResource {

    private static final Pattern MONTH = Pattern.compile("[0-9]{4}-[0-9]{2}");

    private final UsageHistory history;
    private final InvoiceCalculator calculator;

    public InvoiceResource(UsageHistory history, InvoiceCalculator calculator) {
        this.history = history;
        this.calculator = calculator;
    }

    @GET
    @Path("/{tenant}")
    @Operation(summary = "A tenant's invoice for one month, or, without month, the months it has usage in",
            description = "With ?month=YYYY-MM: the invoice (status OPEN) with a line per job, SKU and capacity "
                    + "type; a month without usage is an empty invoice. Without month: the list of months.")
    @APIResponse(responseCode = "200", description = "The invoice (with month) or the list of months (without)",
            content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(oneOf = {InvoiceView.class, InvoiceMonthsView.class})))
    @APIResponse(responseCode = "400", description = "A bad tenant or month; the error names which",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
    public Uni<Response> invoice(
            @Parameter(description = "Tenant id: 1..63 lower-case letters, digits or dashes", example = "acme")
            @PathParam("tenant") String tenant,
            @Parameter(description = "Calendar month in UTC, YYYY-MM", example = "2025-06")
            @QueryParam("month") String month,
            @Context UriInfo uri) {
        try {
            Tenants.require(tenant, "tenant");
        } catch (IllegalArgumentException e) {
            return badRequest("tenant", e.getMessage().replace("field 'tenant'", "parameter 'tenant'"));
        }
        if (month == null && uri.getQueryParameters().containsKey("month")) {
            month = ""; // "?month=" asks for a month and gives none: an error, not the list of months
        }
        if (month == null) {
            return history.months(tenant).map(months -> Response.ok(
                    new InvoiceMonthsView(tenant, months.stream().map(YearMonth::toString).toList())).build());
        }
        YearMonth yearMonth;
        try {
            yearMonth = parseMonth(month);
        } catch (IllegalArgumentException e) {
            return badRequest("month", e.getMessage());
        }
        return history.allocations(tenant, yearMonth)
                .map(allocations -> {
                    Invoice invoice = calculator.invoice(tenant, yearMonth, allocations);
                    return Response.ok(InvoiceView.of(invoice)).build();
                });
    }

    /** A month as YYYY-MM; anything else names the parameter and quotes (a clipped copy of) the value. */
    static YearMonth parseMonth(String month) {
        if (MONTH.matcher(month).matches()) {
            try {
                return YearMonth.parse(month);
            } catch (DateTimeException e) {
                // falls through to the error below
            }
        }
        throw new IllegalArgumentException("parameter 'month' must be a month YYYY-MM (e.g. 2025-06), was '"
                + clip(month) + "'");
    }

    private static Uni<Response> badRequest(String parameter, String message) {
        return Uni.createFrom().item(Response.status(Response.Status.BAD_REQUEST)
                .type(MediaType.APPLICATION_JSON)
                .entity(ApiError.badParameter(parameter, message))
                .build());
    }

    private static String clip(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
