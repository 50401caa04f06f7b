package dev.gpucloud.billing.rest;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A request the API refuses, naming the parameter at fault. */
@Schema(name = "Error", description = "Why a request was refused")
public record ApiError(
        @Schema(example = "bad_request") String error,
        @Schema(description = "The parameter at fault", example = "month") String parameter,
        @Schema(example = "parameter 'month' must be a month YYYY-MM (e.g. 2025-06), was '2025-13'") String message) {

    static ApiError badParameter(String parameter, String message) {
        return new ApiError("bad_request", parameter, message);
    }
}
