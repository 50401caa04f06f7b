package dev.gpucloud.identity;

import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.limits.Check;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who made a call, from a verified token: its subject, the tenants it belongs to and its roles. Every check a
 * service makes asks one of these methods, so what each role may do is written once.
 *
 * <p>{@link #authenticationOff()} is the caller of a service whose authentication was switched off by
 * configuration (its own unit tests): it passes every check, and the request names its tenant.
 */
public record Caller(String subject, Set<String> tenants, Set<Role> roles, boolean unrestricted) {

    private static final Caller UNRESTRICTED = new Caller("(authentication off)", Set.of(), EnumSet.allOf(Role.class),
            true);

    public Caller {
        tenants = Set.copyOf(tenants);
        roles = roles.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(roles));
    }

    /** A caller with the roles among {@code roleNames} that this system knows; other names are ignored. */
    public static Caller of(String subject, Collection<String> tenants, Collection<String> roleNames) {
        Set<Role> roles = EnumSet.noneOf(Role.class);
        roleNames.forEach(name -> Role.ofClaim(name).ifPresent(roles::add));
        return new Caller(subject, new TreeSet<>(tenants), roles, false);
    }

    /**
     * What a refusal for a missing or bad token tells the caller to do: log in at the provider with the device flow,
     * or, on a stack that {@code ./gpucloud up} started, with the development issuer, given {@code devOptions} (the
     * role and tenant that call needs); then send the token.
     */
    public static String howToLogIn(String devOptions) {
        return "log in with `gpucloud login` (your OIDC provider's device flow: `--issuer URL`; on a stack that"
                + " ./gpucloud up started: `--dev " + devOptions + "`) and send 'authorization: Bearer <token>'";
    }

    /**
     * The caller a verified token describes: {@code tenantsClaim} is the value of its tenants claim (a string, or
     * a list of them as the JWT library gives it: strings or JSON values), {@code roleNames} its roles.
     *
     * @throws IllegalArgumentException naming the claim, when the tenants claim is missing, empty where roles
     *         need a tenant, or holds something that is not a tenant id
     */
    public static Caller fromClaims(String subject, String claimName, Object tenantsClaim,
            Collection<String> roleNames) {
        List<String> tenants = new ArrayList<>();
        if (tenantsClaim instanceof CharSequence single) {
            tenants.add(single.toString());
        } else if (tenantsClaim instanceof Iterable<?> many) {
            for (Object value : many) {
                tenants.add(unquote(String.valueOf(value)));
            }
        } else if (tenantsClaim != null) {
            throw new IllegalArgumentException("the token's claim '" + claimName + "' must be a tenant id or a list of"
                    + " them");
        }
        for (String tenant : tenants) {
            try {
                Tenants.require(tenant, claimName);
            } catch (IllegalArgumentException notATenant) {
                throw new IllegalArgumentException("the token's claim '" + claimName + "' holds '" + Check.clip(tenant)
                        + "', which is not a tenant id (1..63 lower-case letters, digits or dashes)");
            }
        }
        Caller caller = of(subject, tenants, roleNames);
        if (tenants.isEmpty() && (caller.roles.contains(Role.MEMBER) || caller.roles.contains(Role.TENANT_ADMIN))) {
            throw new IllegalArgumentException("the token gives the role member or tenant-admin but its claim '"
                    + claimName + "' names no tenant");
        }
        return caller;
    }

    private static String unquote(String json) {
        return json.length() >= 2 && json.startsWith("\"") && json.endsWith("\"") ? json.substring(1, json.length() - 1)
                : json;
    }

    public static Caller authenticationOff() {
        return UNRESTRICTED;
    }

    public boolean has(Role role) {
        return unrestricted || roles.contains(role);
    }

    /** May submit and cancel {@code tenant}'s jobs: a member or tenant-admin of it. */
    public boolean actsFor(String tenant) {
        return unrestricted || (tenants.contains(tenant) && (roles.contains(Role.MEMBER)
                || roles.contains(Role.TENANT_ADMIN)));
    }

    /** May read {@code tenant}'s jobs: who acts for it, and operators. */
    public boolean readsJobsOf(String tenant) {
        return actsFor(tenant) || has(Role.OPERATOR);
    }

    /** May read every tenant's jobs (a listing without a tenant): operators. */
    public boolean readsEveryTenantsJobs() {
        return has(Role.OPERATOR);
    }

    /** May read {@code tenant}'s invoices: who acts for it, finance and operators. */
    public boolean readsInvoicesOf(String tenant) {
        return actsFor(tenant) || has(Role.FINANCE) || has(Role.OPERATOR);
    }

    /**
     * May close any tenant's invoices and book adjustments on them: finance alone. Operators read invoices but do
     * not change what a tenant owes, and a tenant's own people never set their own bill.
     */
    public boolean changesInvoices() {
        return has(Role.FINANCE);
    }

    /** May read {@code tenant}'s quotas and usage: its tenant-admins, finance and operators. */
    public boolean readsUsageOf(String tenant) {
        return unrestricted || (tenants.contains(tenant) && roles.contains(Role.TENANT_ADMIN)) || has(Role.FINANCE)
                || has(Role.OPERATOR);
    }

    /** The one tenant this caller belongs to, where a request leaves the tenant out. */
    public Optional<String> onlyTenant() {
        return tenants.size() == 1 ? Optional.of(tenants.iterator().next()) : Optional.empty();
    }

    /** For messages and logs: {@code 'alice' (member of acme)}. */
    public String describe() {
        if (unrestricted) {
            return subject;
        }
        StringBuilder b = new StringBuilder("'").append(Check.clip(subject)).append("' (");
        b.append(roles.isEmpty() ? "no role" : String.join(", ", roles.stream().map(Role::claim).sorted().toList()));
        if (!tenants.isEmpty()) {
            b.append(" of ").append(String.join(", ", tenants));
        }
        return b.append(')').toString();
    }
}
