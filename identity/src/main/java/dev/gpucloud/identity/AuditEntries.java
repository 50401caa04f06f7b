package dev.gpucloud.identity;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.Tenants;
import java.time.Instant;
import java.util.List;

/**
 * The audit record of one mutating call, as every service writes it: the subject and roles from the caller's
 * verified token (none for a call refused before it had one), and the tenant only where it is a tenant id, so a
 * hostile value in a request never reaches the record's key.
 */
public final class AuditEntries {

    private AuditEntries() {
    }

    /**
     * The record of a call by {@code caller} (null: no caller, the token was missing or did not verify) acting for
     * {@code tenant} (null or not a tenant id: none) on {@code target}; {@code result} is {@link AuditEvent#OK} or
     * the status it was refused with, and {@code reason} what the caller was told.
     */
    public static AuditEvent of(Caller caller, String tenant, String action, String target, Instant at, String from,
            String result, String reason) {
        String subject = caller == null ? "(anonymous)" : caller.subject();
        List<String> roles = caller == null ? List.of() : caller.roles().stream().map(Role::claim).sorted().toList();
        return new AuditEvent(subject, tenantOrNone(tenant), roles, action, target, at, from, result, reason);
    }

    /** {@code tenant} where it is a tenant id; else the empty string. */
    public static String tenantOrNone(String tenant) {
        if (tenant == null || tenant.isEmpty()) {
            return "";
        }
        try {
            return Tenants.require(tenant, "tenant");
        } catch (IllegalArgumentException notATenant) {
            return "";
        }
    }
}
