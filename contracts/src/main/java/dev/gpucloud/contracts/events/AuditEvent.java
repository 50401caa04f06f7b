package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import java.time.Instant;
import java.util.List;

/**
 * One mutating call, on {@code audit.events} keyed by tenant: who made it ({@code subject}, the token's; with its
 * {@code roles}), for which {@code tenant} (empty where the call named none, e.g. a catalog change), the
 * {@code action} ({@code scheduler.SubmitJob}, {@code billing.catalog.add}), its {@code target} (a job id, a
 * catalog entry; empty where there is none yet), when, from which peer address, and the {@code result}: {@code OK}
 * or the status it was refused with ({@code UNAUTHENTICATED}, {@code PERMISSION_DENIED}, {@code NOT_FOUND},
 * {@code INVALID_ARGUMENT}, ...), with a short {@code reason}. A refused call is recorded as well as an accepted
 * one. Never a token, never a secret value: the reason is the message the caller was given, clipped.
 */
public record AuditEvent(
        String subject,
        String tenant,
        List<String> roles,
        String action,
        String target,
        Instant occurredAt,
        String from,
        String result,
        String reason) {

    /** The result of a call that succeeded. */
    public static final String OK = "OK";

    public AuditEvent {
        subject = subject == null || subject.isEmpty() ? "(anonymous)" : Check.clip(subject);
        tenant = tenant == null ? "" : tenant;
        if (!tenant.isEmpty()) {
            Tenants.require(tenant, "tenant");
        }
        roles = Require.list(roles, "roles");
        Require.text(action, "action");
        target = target == null ? "" : Check.clip(target);
        Require.present(occurredAt, "occurredAt");
        from = from == null ? "" : Check.clip(from);
        Require.text(result, "result");
        reason = reason == null ? "" : clipReason(reason);
    }

    /** The record key: the tenant, or {@code -} for a call that concerns no tenant. */
    public String key() {
        return tenant.isEmpty() ? "-" : tenant;
    }

    /** The longest reason a record keeps; longer ones are clipped. */
    public static final int MAX_REASON = 512;

    private static String clipReason(String reason) {
        StringBuilder b = new StringBuilder(Math.min(reason.length(), MAX_REASON + 3));
        for (int i = 0; i < reason.length() && b.length() < MAX_REASON; i++) {
            char c = reason.charAt(i);
            b.append(Character.isISOControl(c) || Character.isSurrogate(c) ? ' ' : c);
        }
        return reason.length() > MAX_REASON ? b.append("...").toString() : b.toString();
    }
}
