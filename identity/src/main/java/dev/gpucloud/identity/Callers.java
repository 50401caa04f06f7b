package dev.gpucloud.identity;

import io.quarkus.security.identity.SecurityIdentity;
import org.eclipse.microprofile.jwt.JsonWebToken;

/** The {@link Caller} of a token that quarkus-oidc verified, for the services (the CLI never loads this). */
public final class Callers {

    /** What a service logs at start when its authentication is switched off. */
    public static final String OFF_WARNING = "authentication is OFF (gpucloud.auth.enabled=false): every caller may"
            + " do everything; this setting is for the service's own tests";

    private Callers() {
    }

    /**
     * The caller {@code identity} describes: its name ({@code preferred_username}, else {@code sub}), its tenants
     * from {@code tenantsClaim} and its roles (quarkus-oidc reads {@code groups} or Keycloak's realm roles).
     *
     * @throws IllegalArgumentException naming the claim, when the tenants claim makes no caller
     */
    public static Caller of(SecurityIdentity identity, String tenantsClaim) {
        String subject = identity.getPrincipal().getName();
        Object tenants = null;
        if (identity.getPrincipal() instanceof JsonWebToken jwt) {
            tenants = jwt.getClaim(tenantsClaim);
            String username = jwt.getClaim("preferred_username");
            subject = username != null ? username : jwt.getSubject() != null ? jwt.getSubject() : subject;
        }
        return Caller.fromClaims(subject, tenantsClaim, tenants, identity.getRoles());
    }
}
