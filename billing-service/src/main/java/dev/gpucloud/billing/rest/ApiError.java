package dev.gpucloud.billing.rest;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A request the API refuses, naming the parameter (or header, or field) at fault. */
@Schema(name = "Error", description = "Why a request was refused")
public record ApiError(
        @Schema(example = "bad_request", enumeration = {"bad_request", "unauthorized", "forbidden",
                "conflict"}) String error,
        @Schema(description = "The parameter, header or field at fault", example = "month") String parameter,
        @Schema(example = "parameter 'month' must be a month YYYY-MM (e.g. 2025-06), was '2025-13'") String message) {

    static ApiError badParameter(String parameter, String message) {
        return new ApiError("bad_request", parameter, message);
    }

    /** A request that is well formed but cannot be done in the state things are in (409). */
    static ApiError conflict(String parameter, String message) {
        return new ApiError("conflict", parameter, message);
    }

    Response toResponse(Response.Status status) {
        return Response.status(status).type(MediaType.APPLICATION_JSON).entity(this).build();
    }
}
