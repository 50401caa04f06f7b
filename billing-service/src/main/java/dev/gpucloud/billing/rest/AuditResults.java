package dev.gpucloud.billing.rest;

import dev.gpucloud.contracts.events.AuditEvent;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.core.Response;

/**
 * How a REST call that changes something ended, in the words of its audit record: the HTTP status as the gRPC
 * status name the scheduler's records use ({@code INVALID_ARGUMENT}, {@code PERMISSION_DENIED}, ...), so one
 * trail reads the same whichever service wrote it, and the message the caller was given.
 */
final class AuditResults {

    private AuditResults() {
    }

    /** {@link AuditEvent#OK} for a 2xx answer, else the status the call was refused with. */
    static String result(Response response) {
        if (response.getStatus() < 300) {
            return AuditEvent.OK;
        }
        return switch (response.getStatus()) {
            case 400 -> "INVALID_ARGUMENT";
            case 401 -> "UNAUTHENTICATED";
            case 403 -> "PERMISSION_DENIED";
            case 404 -> "NOT_FOUND";
            case 409 -> "FAILED_PRECONDITION";
            default -> "HTTP_" + response.getStatus();
        };
    }

    /** What a refused caller was told; empty for an accepted call. */
    static String reason(Response response) {
        return response.getStatus() >= 300 && response.getEntity() instanceof ApiError error ? error.message() : "";
    }

    /** The peer's {@code ip:port}. */
    static String from(HttpServerRequest request) {
        return request.remoteAddress() == null ? "" : request.remoteAddress().hostAddress() + ":"
                + request.remoteAddress().port();
    }
}
