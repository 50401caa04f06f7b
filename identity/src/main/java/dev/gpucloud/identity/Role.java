package dev.gpucloud.identity;

import java.util.Locale;
import java.util.Optional;

/**
 * What a caller may do, as the token's roles say (the {@code groups} claim, or Keycloak's realm roles): the
 * role names are the lower-case, dashed forms of these constants.
 */
public enum Role {
    /** Submit, read, watch and cancel the jobs of the token's tenants; read their invoices. */
    MEMBER,
    /** A member who also reads the tenant's quotas and usage. */
    TENANT_ADMIN,
    /** Invoices, adjustments and closing, for every tenant; no jobs. */
    FINANCE,
    /** Hosts, draining and the price catalog; every tenant's jobs and invoices, read-only. */
    OPERATOR;

    /** The name in a token: {@code member}, {@code tenant-admin}, {@code finance}, {@code operator}. */
    public String claim() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The role a token's role name stands for; empty for a name this system does not use. */
    public static Optional<Role> ofClaim(String name) {
        for (Role role : values()) {
            if (role.claim().equals(name)) {
                return Optional.of(role);
            }
        }
        return Optional.empty();
    }
}
