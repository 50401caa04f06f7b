package dev.gpucloud.billing.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.billing.fold.PriceEntry;
import dev.gpucloud.billing.messaging.AuditTrail;
import dev.gpucloud.billing.repository.CatalogStore;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.identity.AuditEntries;
import dev.gpucloud.identity.Caller;
import io.vertx.core.http.HttpServerRequest;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The price catalog: anyone may read it (prices are not tenant data); only an operator may add a price,
 * which is stored in PostgreSQL and applies from its effective time. Every attempt to add one, accepted or
 * refused, leaves an audit record ({@code billing.catalog.add}).
 */
@Path("/catalog")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Catalog", description = "Effective-dated prices per GPU-hour by GPU model and capacity type")
public class CatalogResource {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The action a catalog change is audited as. */
    static final String ADD_ACTION = "billing.catalog.add";

    private final CatalogStore store;
    private final Access access;
    private final AuditTrail audit;

    public CatalogResource(CatalogStore store, Access access, AuditTrail audit) {
        this.store = store;
        this.access = access;
        this.audit = audit;
    }

    /** The catalog as the API shows it. */
    @Schema(name = "Catalog")
    public record CatalogView(List<PriceEntryView> entries,
            @Schema(description = "MIG compute slices per GPU model (0: no MIG; unlisted: 7)") Map<String, Integer> migSlices) {
    }

    /** A price an operator adds. */
    @Schema(name = "NewPriceEntry")
    public record NewPriceEntry(
            @Schema(required = true, example = "MI300X") String gpuModel,
            @Schema(required = true, enumeration = {"ON_DEMAND", "SPOT", "RESERVED"}) String capacityType,
            @Schema(required = true, description = "UTC instant; not in the past, except for a GPU model the "
                    + "catalog does not know yet", example = "2026-01-01T00:00:00Z") String effectiveFrom,
            @Schema(required = true, example = "4500000") long microsPerGpuHour,
            @Schema(description = "Free text kept with the entry: its source", example = "vendor list price, Dec 2025")
            String note) {
    }

    @GET
    @Operation(summary = "Every price in the catalog, by GPU model, capacity type and effective date")
    @APIResponse(responseCode = "200", description = "The catalog",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = CatalogView.class)))
    @APIResponse(responseCode = "401", description = "No bearer token, or one that is not valid here",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
    public Uni<Response> catalog() {
        return access.authenticated(() -> store.current().map(catalog -> Response.ok(new CatalogView(
                catalog.entries().stream().map(PriceEntryView::of).toList(), catalog.migSlices())).build()));
    }

    @POST
    @Path("/entries")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Add a price (operators only)", description = "The price applies from effectiveFrom; "
            + "billed usage is not repriced, so effectiveFrom must not be in the past, except for the first price of "
            + "a GPU model the catalog does not know (its held usage is then billed).")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = NewPriceEntry.class)))
    @APIResponse(responseCode = "201", description = "Added",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PriceEntryView.class)))
    @APIResponse(responseCode = "400", description = "A bad entry; the error names the field",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "401", description = "No bearer token, or one that is not valid here",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
    @APIResponse(responseCode = "403", description = "The caller is not an operator",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ApiError.class)))
    public Uni<Response> add(String body, @Context HttpServerRequest request) {
        Caller[] caller = {null};
        String from = AuditResults.from(request);
        return access.asOperator("change the price catalog", seen -> caller[0] = seen, () -> addEntry(body))
                .invoke(response -> audit.record(audited(caller[0], from, response)))
                .onFailure().invoke(failure -> audit.record(AuditEntries.of(caller[0], null, ADD_ACTION, "catalog",
                        Instant.now(), from, "INTERNAL", "internal error; see billing's log")));
    }

    /** The audit record of an attempt to add a price that was answered {@code response}. */
    static AuditEvent audited(Caller caller, String from, Response response) {
        String target = "catalog";
        if (response.getEntity() instanceof PriceEntryView added) {
            target = "catalog " + added.gpuModel() + " " + added.capacityType() + " from " + added.effectiveFrom();
        }
        return AuditEntries.of(caller, null, ADD_ACTION, target, Instant.now(), from, AuditResults.result(response),
                AuditResults.reason(response));
    }

    private Uni<Response> addEntry(String body) {
        PriceEntry entry;
        String note;
        try {
            JsonNode node = parse(body);
            entry = new PriceEntry(text(node, "gpuModel"), capacity(text(node, "capacityType")),
                    instant(text(node, "effectiveFrom")), micros(node));
            note = node.hasNonNull("note") ? node.get("note").asText() : null;
            limited("gpuModel", () -> Check.text(entry.gpuModel(), Limits.GPU_MODEL, "gpuModel"));
            limited("note", () -> Check.optionalText(note, Limits.DETAIL, "note"));
            limited("effectiveFrom", () -> Check.time(entry.effectiveFrom(), "effectiveFrom"));
            if (entry.gpuModel().length() > 64 || entry.gpuModel().contains("/") || entry.gpuModel().contains(",")) {
                throw new BadField("gpuModel", "field 'gpuModel' must be at most 64 characters without '/' or ','");
            }
        } catch (BadField e) {
            return InvoiceResource.badRequest(e.field, e.getMessage());
        }
        return store.add(entry, note, Instant.now())
                .map(added -> Response.status(Response.Status.CREATED).entity(PriceEntryView.of(added)).build())
                .onFailure(IllegalArgumentException.class).recoverWithItem(e -> ApiError.badParameter(
                        "effectiveFrom", e.getMessage()).toResponse(Response.Status.BAD_REQUEST));
    }

    /** A limits-table check whose failure is a 400 naming the field (a NUL byte must never reach the database). */
    private static void limited(String field, Runnable check) {
        try {
            check.run();
        } catch (IllegalArgumentException e) {
            throw new BadField(field, e.getMessage());
        }
    }

    private static final class BadField extends RuntimeException {
        final String field;

        BadField(String field, String message) {
            super(message);
            this.field = field;
        }
    }

    private static JsonNode parse(String body) {
        try {
            JsonNode node = body == null || body.isBlank() ? null : JSON.readTree(body);
            if (node == null || !node.isObject()) {
                throw new BadField("body", "the body must be a JSON object with gpuModel, capacityType, effectiveFrom "
                        + "and microsPerGpuHour");
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new BadField("body", "the body is not valid JSON: " + e.getOriginalMessage());
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull() || !value.isTextual() || value.asText().isBlank()) {
            throw new BadField(field, "field '" + field + "' is required (a string)");
        }
        return value.asText().strip();
    }

    private static CapacityType capacity(String value) {
        try {
            return CapacityType.valueOf(value);
        } catch (IllegalArgumentException e) {
            throw new BadField("capacityType", "field 'capacityType' must be ON_DEMAND, SPOT or RESERVED, was '"
                    + clip(value) + "'");
        }
    }

    private static Instant instant(String value) {
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw new BadField("effectiveFrom", "field 'effectiveFrom' must be a UTC instant like "
                    + "2026-01-01T00:00:00Z, was '" + clip(value) + "'");
        }
    }

    private static long micros(JsonNode node) {
        JsonNode value = node.get("microsPerGpuHour");
        if (value == null || !value.canConvertToExactIntegral() || !value.canConvertToLong() || value.asLong() < 0) {
            throw new BadField("microsPerGpuHour", "field 'microsPerGpuHour' must be a whole number >= 0 "
                    + "(micro-USD per GPU-hour)");
        }
        return value.asLong();
    }

    private static String clip(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
