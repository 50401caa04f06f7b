package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.config.BillingConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;

/**
 * Who may read or change what, until authentication arrives: every tenant-scoped request names the caller's
 * tenant in {@value #TENANT_HEADER}, and may only read that tenant's data (403 otherwise, before anything is
 * read); an operator, who sends the configured token in {@value #OPERATOR_HEADER}, may read any tenant and
 * change the price catalog. The header is the seam where an authenticated principal will plug in.
 */
@ApplicationScoped
public class Access {

    public static final String TENANT_HEADER = "X-Gpucloud-Tenant";
    public static final String OPERATOR_HEADER = "X-Gpucloud-Operator-Token";

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(Access.class);

    private final Optional<String> operatorToken;

    public Access(BillingConfig config) {
        this.operatorToken = config.operatorToken().filter(token -> !token.isBlank());
    }

    /** Empty when the caller may read {@code tenant}'s data; else the 401 or 403 to answer. */
    public Optional<Response> readTenant(String tenant, String callerTenant, String token) {
        if (token != null) {
            return operator(token);
        }
        if (callerTenant == null || callerTenant.isBlank()) {
            return Optional.of(new ApiError("unauthorized", TENANT_HEADER, "header '" + TENANT_HEADER
                    + "' (the caller's tenant) is required").toResponse(Response.Status.UNAUTHORIZED));
        }
        if (!callerTenant.equals(tenant)) {
            return Optional.of(new ApiError("forbidden", TENANT_HEADER, "tenant '" + clip(callerTenant)
                    + "' may not read another tenant's data").toResponse(Response.Status.FORBIDDEN));
        }
        return Optional.empty();
    }

    /** Empty when {@code token} is the operator's; else the 401 or 403 to answer. */
    public Optional<Response> operator(String token) {
        if (token == null || token.isBlank()) {
            return Optional.of(new ApiError("unauthorized", OPERATOR_HEADER, "header '" + OPERATOR_HEADER
                    + "' (the operator token) is required").toResponse(Response.Status.UNAUTHORIZED));
        }
        if (operatorToken.isEmpty() || !MessageDigest.isEqual(operatorToken.get().getBytes(StandardCharsets.UTF_8),
                token.getBytes(StandardCharsets.UTF_8))) {
            if (operatorToken.isEmpty()) {
                // the operator learns why from the log; a caller learns nothing about the configuration
                LOG.warn("an operator request was refused: no operator token is configured");
            }
            return Optional.of(new ApiError("forbidden", OPERATOR_HEADER, "header '" + OPERATOR_HEADER
                    + "' is not the operator token").toResponse(Response.Status.FORBIDDEN));
        }
        return Optional.empty();
    }

    private static String clip(String text) {
        return dev.gpucloud.contracts.limits.Check.clip(text);
    }
}
