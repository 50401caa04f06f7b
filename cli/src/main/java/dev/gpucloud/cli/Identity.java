package dev.gpucloud.cli;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.identity.Role;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
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
            "Without --dev or --token: the OAuth 2.0 device flow against your OIDC provider (--issuer): open the",
            "page it prints, enter the code, approve; the token and its refresh token are stored, and later",
            "commands refresh an expired token by themselves.",
            "--dev mints one with the key of the local development issuer that ./gpucloud up starts;",
            "--token stores one your OIDC provider (Keycloak, Okta, Entra, Dex) issued."})
    static class Login implements Callable<Integer> {
        private static final List<String> DEV_ONLY = List.of("--tenant", "--role", "--user", "--hours",
                "--issuer-key");
        private static final List<String> DEVICE_ONLY = List.of("--client-id", "--scope");

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
        @Option(names = "--issuer", defaultValue = "${env:GPUCLOUD_OIDC_URL:-http://localhost:8086}", paramLabel = "URL",
                description = "The OIDC provider's issuer URL, as the services know it: the device flow logs in there"
                        + " (Keycloak: https://HOST/realms/REALM); with --dev, the issuer the token names (default:"
                        + " ${DEFAULT-VALUE}; env GPUCLOUD_OIDC_URL).")
        String issuer;
        @Option(names = "--client-id", defaultValue = "gpucloud-cli", paramLabel = "ID",
                description = "Device flow: the provider's public client to log in as (default: ${DEFAULT-VALUE}).")
        String clientId;
        @Option(names = "--scope", defaultValue = "openid", paramLabel = "SCOPES",
                description = "Device flow: the scopes to ask for, space-separated (default: ${DEFAULT-VALUE}).")
        String scope;

        @Override
        public Integer call() {
            CommandLine.ParseResult given = spec.commandLine().getParseResult();
            List<String> devOptions = DEV_ONLY.stream().filter(given::hasMatchedOption).toList();
            List<String> deviceOptions = DEVICE_ONLY.stream().filter(given::hasMatchedOption).toList();
            if (dev && token != null) {
                throw usage("--dev and --token exclude each other");
            }
            if (!dev && !devOptions.isEmpty()) {
                throw usage(String.join(", ", devOptions) + ": only with --dev (the local issuer); a provider's"
                        + " token names its own user, tenants and roles");
            }
            if (token != null && (given.hasMatchedOption("--issuer") || !deviceOptions.isEmpty())) {
                throw usage("--token stores the token as given; --issuer, --client-id and --scope are for the device"
                        + " flow (login --issuer URL, without --token)");
            }
            if (dev && !deviceOptions.isEmpty()) {
                throw usage(String.join(", ", deviceOptions) + ": only for the device flow against your provider"
                        + " (login --issuer URL), not with --dev");
            }
            String stored;
            Path file;
            if (dev) {
                stored = mint();
                file = Credentials.save(parent.profile, stored);
            } else if (token != null) {
                stored = token.strip();
                file = Credentials.save(parent.profile, stored);
            } else {
                Approved approved = deviceFlow();
                Oidc.Tokens tokens = approved.tokens();
                stored = tokens.accessToken();
                file = Credentials.save(parent.profile, stored, tokens.refreshToken() == null ? null
                        : new Credentials.Refresh(approved.provider().issuer(), clientId,
                                approved.provider().tokenEndpoint().toString(), tokens.refreshToken()));
            }
            spec.commandLine().getOut().println("logged in as " + describe(stored) + "; token in " + file
                    + " (profile " + parent.profile + ")");
            return 0;
        }

        /** The tokens, and the provider that issued them. */
        private record Approved(Oidc.Provider provider, Oidc.Tokens tokens) {
        }

        /** RFC 8628: discovery, a device code, the user's approval in a browser, then the tokens. */
        private Approved deviceFlow() {
            try {
                Oidc.issuerUri(issuer);
            } catch (IllegalArgumentException e) {
                throw usage(e.getMessage() + "; or log in with --dev (the local issuer) or --token JWT");
            }
            if (clientId.isBlank()) {
                throw usage("--client-id must not be blank");
            }
            Oidc oidc = new Oidc(httpClient(parent.caFile, spec), LeaderFailover.Clock.system());
            Oidc.Provider provider = oidc.discover(issuer);
            Oidc.DeviceCode code = oidc.authorize(provider, clientId, scope);
            PrintWriter err = spec.commandLine().getErr();
            err.println("to log in, open " + code.verificationUri() + " and enter code " + code.userCode());
            if (code.verificationUriComplete() != null) {
                err.println("  (or open " + code.verificationUriComplete() + ", which carries the code)");
            }
            err.println("waiting for the approval at " + provider.issuer() + " (the code expires in "
                    + code.expiresIn().toSeconds() + " s) ...");
            err.flush();
            return new Approved(provider, oidc.poll(provider, clientId, code));
        }

        private CommandLine.ParameterException usage(String message) {
            return new CommandLine.ParameterException(spec.commandLine(), message);
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
            if (!Files.isReadable(issuerKey)) {
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
            String token = token(parent.profile, parent.caFile, spec.commandLine().getErr()).orElse(null);
            if (token == null) {
                spec.commandLine().getErr().println("not logged in (profile " + parent.profile + "): ./gpucloud login"
                        + " --issuer URL (your provider), --dev --tenant T --role member, or --token JWT");
                return 1;
            }
            spec.commandLine().getOut().println(describe(token) + " (profile " + parent.profile + ")");
            return 0;
        }
    }

    @Command(name = "logout", description = {"Forget the profile's tokens; after a device-flow login, first revoke its",
            "refresh token at the provider (RFC 7009), so that a copy of the file is worth nothing there either.",
            "An access token cannot be revoked: it stays valid until it expires (minutes, as the provider sets it)."})
    static class Logout implements Callable<Integer> {
        @CommandLine.ParentCommand
        GpucloudCli parent;
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Optional<Credentials.Refresh> refresh = Credentials.refresh(parent.profile);
            int code = 0;
            if (refresh.isPresent()) {
                Credentials.Refresh stored = refresh.get();
                try {
                    URI endpoint = new Oidc(httpClient(parent.caFile, spec), LeaderFailover.Clock.system())
                            .revoke(stored.issuer(), stored.clientId(), stored.refreshToken());
                    out.println("revoked the refresh token at " + endpoint);
                } catch (Oidc.Failure | IllegalArgumentException | java.io.UncheckedIOException e) {
                    // the files go all the same: keeping them would keep the login, which is what was asked to end
                    err.println("warning: could not revoke the refresh token at " + stored.issuer() + " ("
                            + e.getMessage() + "): it stays valid there until it expires");
                    code = 1;
                }
            }
            List<Path> gone = Credentials.forget(parent.profile);
            if (gone.isEmpty()) {
                out.println("not logged in (profile " + parent.profile + ")");
            } else {
                out.println("logged out of profile " + parent.profile + ": deleted " + String.join(", ",
                        gone.stream().map(Path::toString).toList()));
            }
            if (Credentials.fromEnvironment()) {
                err.println("note: GPUCLOUD_TOKEN is set in this shell; commands still send it");
            }
            return code;
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
        @Option(names = "--url", description = "The issuer URL tokens name (default: http://localhost:PORT, or"
                + " https://localhost:PORT with --tls-keystore).")
        String url;
        @Option(names = "--tls-keystore", paramLabel = "FILE", description = "Serve TLS 1.3 only, with this PKCS12"
                + " key and certificate (./gpucloud up gives one from the stack's CA).")
        Path tlsKeystore;
        @Option(names = "--tls-password-file", paramLabel = "FILE", description = "The keystore's password, in a"
                + " file (never on the command line).")
        Path tlsPasswordFile;

        @Override
        public Integer call() throws Exception {
            if ((tlsKeystore == null) != (tlsPasswordFile == null)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--tls-keystore and --tls-password-file"
                        + " go together");
            }
            String issuerUrl = url != null ? url : (tlsKeystore != null ? "https" : "http") + "://localhost:" + port;
            DevIssuer issuer = DevIssuer.loadOrCreate(keyFile, issuerUrl);
            InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
            if (tlsKeystore != null) {
                issuer.serveOn(tlsServer(loopback));
            } else {
                issuer.serve(loopback);
            }
            spec.commandLine().getOut().println("development issuer " + issuerUrl + " on 127.0.0.1:" + port
                    + (tlsKeystore != null ? ", TLS 1.3" : "") + " (key " + keyFile + ")");
            spec.commandLine().getOut().flush();
            Thread.currentThread().join();
            return 0;
        }

        /** An HTTPS server on {@code address} that speaks TLS 1.3 only, with the keystore's key. */
        private HttpsServer tlsServer(InetSocketAddress address) throws Exception {
            char[] password = Files.readString(tlsPasswordFile).strip().toCharArray();
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (var in = Files.newInputStream(tlsKeystore)) {
                keys.load(in, password);
            }
            KeyManagerFactory managers = KeyManagerFactory.getInstance(
                    KeyManagerFactory.getDefaultAlgorithm());
            managers.init(keys, password);
            SSLContext tls = SSLContext.getInstance("TLSv1.3");
            tls.init(managers.getKeyManagers(), null, null);
            HttpsServer server = HttpsServer.create(address, 64);
            server.setHttpsConfigurator(new HttpsConfigurator(tls) {
                @Override
                public void configure(HttpsParameters params) {
                    SSLParameters only13 = tls.getDefaultSSLParameters();
                    only13.setProtocols(new String[] {"TLSv1.3"});
                    params.setSSLParameters(only13);
                }
            });
            return server;
        }
    }

    /** Tokens this close to their expiry are refreshed before a call, so that none expires on the way. */
    static final Duration REFRESH_BEFORE = Duration.ofSeconds(30);

    /**
     * The token to send: GPUCLOUD_TOKEN, else the profile's. A stored token that has expired (or is about to) is
     * refreshed first where the device flow left a refresh token; when that fails, one line on {@code err} says
     * so, and the old token goes out (the services then say it has expired).
     */
    static Optional<String> token(String profile, Path caFile, PrintWriter err) {
        Optional<String> token = Credentials.token(profile);
        if (token.isEmpty() || Credentials.fromEnvironment()) {
            return token;
        }
        Optional<Long> expiry = Credentials.expiry(token.get());
        if (expiry.isEmpty() || Instant.ofEpochSecond(expiry.get()).isAfter(Instant.now().plus(REFRESH_BEFORE))) {
            return token;
        }
        Optional<Credentials.Refresh> refresh = Credentials.refresh(profile);
        if (refresh.isEmpty()) {
            return token;
        }
        Credentials.Refresh stored = refresh.get();
        try {
            Oidc.Tokens fresh = new Oidc(Oidc.http(caFile), LeaderFailover.Clock.system()).refresh(
                    URI.create(stored.tokenEndpoint()), stored.clientId(), stored.refreshToken());
            Credentials.save(profile, fresh.accessToken(), stored.withRefreshToken(fresh.refreshToken()));
            return Optional.of(fresh.accessToken());
        } catch (Oidc.Failure | IllegalArgumentException | java.io.UncheckedIOException e) {
            err.println("warning: the stored token of profile " + profile + " has expired and refreshing it failed ("
                    + e.getMessage() + "); log in again: gpucloud login --issuer " + stored.issuer());
            err.flush();
            return token;
        }
    }

    /** The device flow's HTTP client: the JVM's CAs, plus --ca-file's where one is named. */
    static java.net.http.HttpClient httpClient(Path caFile, CommandLine.Model.CommandSpec spec) {
        try {
            return Oidc.http(caFile);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--ca-file: " + e.getMessage());
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
