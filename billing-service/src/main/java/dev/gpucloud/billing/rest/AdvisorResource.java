package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.config.BillingConfig;
import dev.gpucloud.billing.fold.InvoiceCalculator;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.billing.fold.advisor.AdvisorAssumptions;
import dev.gpucloud.billing.fold.advisor.CommitmentAdvice;
import dev.gpucloud.billing.fold.advisor.CostAdvice;
import dev.gpucloud.billing.fold.advisor.CostAdvisor;
import dev.gpucloud.billing.fold.MicroUsd;
import dev.gpucloud.billing.repository.CatalogStore;
import dev.gpucloud.billing.repository.UsageHistory;
import dev.gpucloud.contracts.events.Tenants;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.YearMonth;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The cost advisor over HTTP, under the same tenant rule as invoices. */
@Path("/advisor")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Advisor", description = "What a month would cost on demand, with spot, and with the best commitment")
public class AdvisorResource {

    private final UsageHistory history;
    private final CatalogStore catalogs;
    private final InvoiceCalculator configured;
    private final Access access;
    private final AdvisorAssumptions assumptions;

    public AdvisorResource(UsageHistory history, CatalogStore catalogs, InvoiceCalculator configured, Access access,
            BillingConfig config) {
        this.history = history;
        this.catalogs = catalogs;
        this.configured = configured;
        this.access = access;
        this.assumptions = new AdvisorAssumptions(Pattern.compile(config.advisorSpotEligibleJobs()),
                config.advisorSpotPricePercent(), config.advisorReservedPricePercent(), config.advisorHistoryMonths());
    }

    @Schema(name = "CommitmentAdvice")
    public record CommitmentView(
            @Schema(example = "A100-SXM4-40GB") String sku,
            @Schema(description = "The best commitment, in SKU-hours a month (0: none pays off)", example = "100")
            long hours,
            @Schema(example = "1647000") long reservedMicrosPerHour,
            @Schema(example = "2745000") long onDemandMicrosPerHour,
            @Schema(description = "Not spot-tolerant SKU-seconds used this month", example = "363600")
            long usedSecondsThisMonth,
            @Schema(description = "Months of history the level was chosen over", example = "12") int months,
            @Schema(description = "Cost of that usage over those months on demand") long historyOnDemandMicros,
            @Schema(description = "Cost over those months with the commitment") long historyCostMicros) {

        static CommitmentView of(CommitmentAdvice a) {
            return new CommitmentView(a.sku(), a.hours(), a.reservedMicrosPerHour(), a.onDemandMicrosPerHour(),
                    a.usedSecondsThisMonth(), a.months(), a.historyOnDemandMicros(), a.historyCostMicros());
        }
    }

    @Schema(name = "CostAdvice", description = "A tenant's month priced four ways, in micro-USD")
    public record AdviceView(String tenant, String month,
            @Schema(description = "As invoiced (configured commitments included)") long billedMicros,
            @Schema(description = "All usage on demand") long onDemandMicros,
            @Schema(description = "Spot-tolerant usage on spot, the rest on demand") long withSpotMicros,
            @Schema(description = "Spot for spot-tolerant usage, the best commitment per SKU for the rest") long bestMicros,
            @Schema(example = "12.34") String best,
            @Schema(description = "Spot-tolerant SKU-seconds this month") long spotTolerantSeconds,
            List<CommitmentView> commitments, List<String> assumptions) {

        static AdviceView of(CostAdvice a) {
            return new AdviceView(a.tenant(), a.month().toString(), a.billedMicros(), a.onDemandMicros(),
                    a.withSpotMicros(), a.bestMicros(), MicroUsd.toUsdCents(a.bestMicros()), a.spotTolerantSeconds(),
                    a.commitments().stream().map(CommitmentView::of).toList(), a.assumptions());
        }
    }

    @GET
    @Path("/{tenant}")
    @Operation(summary = "Cost advice for a tenant's month: on demand, with spot, and with the best commitment")
    @APIResponse(responseCode = "200", description = "The advice",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AdviceView.class)))
    @APIResponse(responseCode = "400", description = "A bad tenant or month",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "401", description = "No bearer token, or one that is not valid here")
    @APIResponse(responseCode = "403", description = "The caller may not read the tenant's data")
    public Uni<Response> advise(@PathParam("tenant") String tenant, @QueryParam("month") String month) {
        return access.readingInvoicesOf(tenant, () -> advice(tenant, month));
    }

    private Uni<Response> advice(String tenant, String month) {
        try {
            Tenants.require(tenant, "tenant");
        } catch (IllegalArgumentException e) {
            return InvoiceResource.badRequest("tenant", e.getMessage().replace("field 'tenant'", "parameter 'tenant'"));
        }
        YearMonth yearMonth;
        try {
            yearMonth = InvoiceResource.parseMonth(month);
        } catch (IllegalArgumentException e) {
            return InvoiceResource.badRequest("month", e.getMessage());
        }
        return catalogs.current().flatMap(catalog -> Multi.createFrom()
                .range(0, assumptions.historyMonths())
                .onItem().transformToUniAndConcatenate(back -> {
                    YearMonth m = yearMonth.minusMonths(back);
                    return history.allocations(tenant, m).map(allocations -> Map.entry(m, allocations));
                })
                .collect().asList()
                .map(entries -> {
                    Map<YearMonth, List<MeteredAllocation>> byMonth = new TreeMap<>();
                    entries.forEach(e -> byMonth.put(e.getKey(), e.getValue()));
                    CostAdvice advice = new CostAdvisor(configured.policy(), catalog, configured.commitments(),
                            assumptions).advise(tenant, yearMonth, byMonth);
                    return Response.ok(AdviceView.of(advice)).build();
                }));
    }
}
