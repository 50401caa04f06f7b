package dev.gpucloud.cli;

import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.identity.Role;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import org.jose4j.jwt.JwtClaims;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The CLI's identity commands: log in, say who is logged in, and run the development issuer. */
final class Identity {

    private Identity() {
    }

    @Command(name = "login", description = {
            "Store a token that later commands send (per --profile, in $GPUCLOUD_HOME/profiles, default ~/.gpucloud).",
            "--dev mints one with the key of the local development issuer that ./gpucloud up starts;",
            "--token stores one your OIDC provider (Keycloak, Okta, Entra, Dex) issued."})
    static class Login implements Callable<Integer> {
        @CommandLine.ParentCommand
        GpucloudCli parent;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--dev", description = "Mint a token with the local development issuer's key.")
        boolean dev;
        @Option(names = "--token", paramLabel = "JWT", description = "Store this token (from your OIDC provider).")
        String token;
        @Option(names = "--tenant", description = "With --dev: a tenant the token belongs to (repeatable).")
        List<String> tenants = new ArrayList<>();
        @Option(names = "--role", description = "With --dev: member, tenant-admin, finance or operator (repeatable).")
        List<String> roles = new ArrayList<>();
        @Option(names = "--user", defaultValue = "${env:USER:-dev}", description = "With --dev: the subject"
                + " (default: ${DEFAULT-VALUE}).")
        String user;
        @Option(names = "--hours", defaultValue = "12", description = "With --dev: how long the token is valid.")
        int hours;
        @Option(names = "--issuer-key", defaultValue = "${env:GPUCLOUD_ISSUER_KEY}", paramLabel = "FILE",
                description = "With --dev: the issuer's key file (./gpucloud sets it; env GPUCLOUD_ISSUER_KEY).")
        Path issuerKey;
        @Option(names = "--issuer", defaultValue = "${env:GPUCLOUD_OIDC_URL:-http://localhost:8086}",
                description = "With --dev: the issuer's URL, as the services know it (default: ${DEFAULT-VALUE}).")
        String issuer;

        @Override
        public Integer call() {
            if (dev == (token != null)) {
                throw new CommandLine.ParameterException(spec.commandLine(), dev ? "--dev and --token exclude each"
                        + " other" : "give --dev (the local issuer) or --token JWT (from your provider); the"
                        + " device-code flow against a provider is not built yet");
            }
            String minted = token;
            if (dev) {
                minted = mint();
            }
            Path file = Credentials.save(parent.profile, minted.strip());
            spec.commandLine().getOut().println("logged in as " + describe(minted) + "; token in " + file
                    + " (profile " + parent.profile + ")");
            return 0;
        }

        private String mint() {
            if (roles.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--dev needs --role: one of "
                        + String.join(", ", Arrays.stream(Role.values()).map(Role::claim).toList()));
            }
            for (String role : roles) {
                if (Role.ofClaim(role).isEmpty()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--role must be one of "
                            + String.join(", ", Arrays.stream(Role.values()).map(Role::claim).toList()) + ", was '"
                            + role + "'");
                }
            }
            if (tenants.isEmpty() && (roles.contains("member") || roles.contains("tenant-admin"))) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--role member and tenant-admin need"
                        + " --tenant");
            }
            if (hours < 1 || hours > 24 * 30) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--hours must be within 1..720, was "
                        + hours);
            }
            if (issuerKey == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--dev needs the issuer's key file:"
                        + " run it through ./gpucloud (which knows the stack's), or give --issuer-key");
            }
            if (!java.nio.file.Files.isReadable(issuerKey)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "cannot read the issuer key "
                        + issuerKey + ": is the stack up (./gpucloud up)?");
            }
            return DevIssuer.loadOrCreate(issuerKey, issuer).mint(user, tenants, roles, Duration.ofHours(hours));
        }
    }

    @Command(name = "whoami", description = "Who the stored token says you are (read from it, not checked).")
    static class WhoAmI implements Callable<Integer> {
        @CommandLine.ParentCommand
        GpucloudCli parent;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            String token = Credentials.token(parent.profile).orElse(null);
            if (token == null) {
                spec.commandLine().getErr().println("not logged in (profile " + parent.profile + "): ./gpucloud login"
                        + " --dev --tenant T --role member, or --token JWT");
                return 1;
            }
            spec.commandLine().getOut().println(describe(token) + " (profile " + parent.profile + ")");
            return 0;
        }
    }

    @Command(name = "issuer", description = {"Run the development OIDC issuer: discovery and the JWK set on loopback.",
            "./gpucloud up starts it; the services find its keys as they would any provider's."})
    static class Issuer implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--port", defaultValue = "8086")
        int port;
        @Option(names = "--key-file", required = true, paramLabel = "FILE",
                description = "The signing key; created (owner-only) if missing.")
        Path keyFile;
        @Option(names = "--url", description = "The issuer URL tokens name (default: http://localhost:PORT).")
        String url;

        @Override
        public Integer call() throws Exception {
            String issuerUrl = url != null ? url : "http://localhost:" + port;
            DevIssuer issuer = DevIssuer.loadOrCreate(keyFile, issuerUrl);
            issuer.serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            spec.commandLine().getOut().println("development issuer " + issuerUrl + " on 127.0.0.1:" + port
                    + " (key " + keyFile + ")");
            spec.commandLine().getOut().flush();
            Thread.currentThread().join();
            return 0;
        }
    }

    /** The token's roles this system knows, from {@code groups} or Keycloak's {@code realm_access.roles}. */
    private static List<String> roles(JwtClaims claims) throws Exception {
        List<String> names = new ArrayList<>();
        if (claims.hasClaim(DevIssuer.ROLES_CLAIM)) {
            names.addAll(claims.getStringListClaimValue(DevIssuer.ROLES_CLAIM));
        }
        if (claims.getClaimValue("realm_access") instanceof java.util.Map<?, ?> realm
                && realm.get("roles") instanceof List<?> list) {
            list.forEach(r -> names.add(String.valueOf(r)));
        }
        return names.stream().filter(r -> Role.ofClaim(r).isPresent()).distinct().toList();
    }

    /** {@code 'alice' (member of acme), until 2026-12-04T09:00:00Z}, from the token's claims. */
    static String describe(String token) {
        try {
            JwtClaims claims = JwtClaims.parse(Credentials.unverifiedClaims(token));
            Object user = claims.getClaimValue("preferred_username");
            String subject = user != null ? user.toString() : String.valueOf(claims.getSubject());
            List<String> roles = roles(claims);
            List<String> tenants = claims.hasClaim(DevIssuer.TENANTS_CLAIM)
                    ? claims.getStringListClaimValue(DevIssuer.TENANTS_CLAIM) : List.of();
            String until = claims.getExpirationTime() == null ? ""
                    : ", until " + Instant.ofEpochSecond(claims.getExpirationTime().getValue());
            return "'" + subject + "' (" + (roles.isEmpty() ? "no role" : String.join(", ", roles))
                    + (tenants.isEmpty() ? "" : " of " + String.join(", ", tenants)) + ")" + until;
        } catch (Exception e) {
            return "a token that is not a readable JWT";
        }
    }
}
