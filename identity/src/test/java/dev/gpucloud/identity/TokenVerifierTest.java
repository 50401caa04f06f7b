package dev.gpucloud.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tokens as the node agent checks them: from a real issuer over HTTP, found through discovery. */
class TokenVerifierTest {

    static HttpServer server;
    static DevIssuer issuer;

    @BeforeAll
    static void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        issuer = DevIssuer.inMemory("http://127.0.0.1:" + server.getAddress().getPort());
        issuer.serveOn(server);
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    private static TokenVerifier verifier() {
        return new TokenVerifier(issuer.issuer(), DevIssuer.AUDIENCE, DevIssuer.TENANTS_CLAIM, DevIssuer.ROLES_CLAIM);
    }

    @Test
    void aTokenOfTheIssuerGivesItsCaller() throws Exception {
        Caller caller = verifier().verify(issuer.mint("ops", List.of(), List.of("operator"), Duration.ofHours(1)));

        assertThat(caller.subject()).isEqualTo("ops");
        assertThat(caller.has(Role.OPERATOR)).isTrue();
        Caller member = verifier().verify(issuer.mint("alice", List.of("acme"), List.of("member"), Duration.ofHours(1)));
        assertThat(member.tenants()).containsExactly("acme");
    }

    @Test
    void everyKindOfBadTokenIsRefusedWithoutSayingWhatItHeld() {
        Instant now = Instant.now();
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("signed by another key", DevIssuer.inMemory(issuer.issuer()).mint("ops", List.of(), List.of("operator"),
                Duration.ofHours(1)));
        bad.put("expired", issuer.mint("ops", List.of(), List.of("operator"), Duration.ofMinutes(-5)));
        JwtClaims early = issuer.claims("ops", List.of(), List.of("operator"), now, Duration.ofHours(1));
        early.setNotBefore(org.jose4j.jwt.NumericDate.fromSeconds(now.getEpochSecond() + 600));
        bad.put("not yet valid", issuer.sign(early));
        JwtClaims audience = issuer.claims("ops", List.of(), List.of("operator"), now, Duration.ofHours(1));
        audience.setAudience("another-service");
        bad.put("another audience", issuer.sign(audience));
        JwtClaims other = issuer.claims("ops", List.of(), List.of("operator"), now, Duration.ofHours(1));
        other.setIssuer("https://elsewhere.example");
        bad.put("another issuer", issuer.sign(other));
        String good = issuer.mint("ops", List.of(), List.of("operator"), Duration.ofHours(1));
        String[] parts = good.split("\\.");
        bad.put("alg none", b64("{\"alg\":\"none\"}") + "." + parts[1] + ".");
        bad.put("tampered", parts[0] + "." + b64(new String(Base64.getUrlDecoder().decode(parts[1]),
                StandardCharsets.UTF_8).replace("\"ops\"", "\"root\"")) + "." + parts[2]);
        bad.put("not a JWT", "hello");
        bad.forEach((what, token) -> assertThatThrownBy(() -> verifier().verify(token)).as(what)
                .isInstanceOf(TokenVerifier.Refused.class).hasMessageNotContaining(token));

        assertThatThrownBy(() -> verifier().verify("a".repeat(TokenVerifier.MAX_TOKEN_CHARS + 1)))
                .isInstanceOf(TokenVerifier.Refused.class).hasMessageContaining("more than 16384");
        assertThatThrownBy(() -> verifier().verify(null)).hasMessage("no bearer token");
    }

    @Test
    void aMalformedTenantsClaimIsRefusedNamingTheClaim() {
        JwtClaims claims = issuer.claims("ops", List.of(), List.of("member"), Instant.now(), Duration.ofHours(1));
        claims.setClaim(DevIssuer.TENANTS_CLAIM, List.of("../etc"));

        assertThatThrownBy(() -> verifier().verify(issuer.sign(claims))).isInstanceOf(TokenVerifier.Refused.class)
                .hasMessageContaining("gpucloud_tenants");
    }

    @Test
    void anIssuerThatCannotBeReachedIsNotTheTokensFault() throws IOException {
        HttpServer closed = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
        int port = closed.getAddress().getPort();
        closed.stop(0);
        TokenVerifier nowhere = new TokenVerifier("http://127.0.0.1:" + port, DevIssuer.AUDIENCE,
                DevIssuer.TENANTS_CLAIM, DevIssuer.ROLES_CLAIM);

        assertThatThrownBy(() -> nowhere.verify(issuer.mint("ops", List.of(), List.of("operator"),
                Duration.ofHours(1)))).isInstanceOf(IOException.class);
        TokenVerifier impostor = new TokenVerifier(issuer.issuer() + "/", "gpucloud", "t", "groups");
        assertThat(impostor.issuer()).isEqualTo(issuer.issuer());
    }

    /**
     * A Kubernetes API server serves its service account issuer's discovery document and keys only over TLS from
     * the cluster's own CA, and only to a caller with a token of its own (its default RBAC grants them to service
     * accounts): an issuer served like that here.
     */
    @Test
    void aPrivateIssuerIsReadWithItsCaAndABearerToken(@TempDir Path dir) throws Exception {
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Path keystore = dir.resolve("apiserver.p12");
        Path ca = dir.resolve("ca.crt");
        run(keytool, "-genkeypair", "-alias", "apiserver", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1", "-validity", "2", "-keystore", keystore.toString(),
                "-storetype", "PKCS12", "-storepass", "changeit", "-keypass", "changeit");
        run(keytool, "-exportcert", "-rfc", "-alias", "apiserver", "-keystore", keystore.toString(), "-storepass",
                "changeit", "-file", ca.toString());
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(keystore)) {
            ks.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(ks, "changeit".toCharArray());
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(keys.getKeyManagers(), null, null);
        HttpsServer apiServer = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        apiServer.setHttpsConfigurator(new HttpsConfigurator(tls));
        DevIssuer cluster = DevIssuer.inMemory("https://127.0.0.1:" + apiServer.getAddress().getPort());
        String callerToken = "the-schedulers-own-service-account-token";
        apiServer.createContext("/", ex -> {
            String path = ex.getRequestURI().getPath();
            String body = !("Bearer " + callerToken).equals(ex.getRequestHeaders().getFirst("Authorization")) ? null
                    : path.equals("/.well-known/openid-configuration") ? cluster.discovery()
                    : path.equals("/jwks") ? cluster.jwks() : null;
            byte[] bytes = (body == null ? "{\"kind\":\"Status\",\"code\":401}" : body).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(body == null ? 401 : 200, bytes.length);
            try (var out = ex.getResponseBody()) {
                out.write(bytes);
            }
        });
        apiServer.start();
        try {
            Path bearer = dir.resolve("token");
            Files.writeString(bearer, callerToken + "\n");
            JwtClaims claims = cluster.claims("system:serviceaccount:gpucloud:node-agent", List.of(), List.of(),
                    Instant.now(), Duration.ofMinutes(10));
            claims.setAudience("gpucloud-enrolment");
            claims.setClaim("kubernetes.io", Map.of("node", Map.of("name", "gpu-node-7")));
            String token = cluster.sign(claims);

            JwtClaims verified = TokenVerifier.forPrivateIssuer(cluster.issuer(), "gpucloud-enrolment", bearer, ca)
                    .verifiedClaims(token);

            assertThat(verified.getSubject()).isEqualTo("system:serviceaccount:gpucloud:node-agent");
            assertThat(verified.getClaimValue("kubernetes.io")).asString().contains("gpu-node-7");
            assertThatThrownBy(() -> TokenVerifier.forPrivateIssuer(cluster.issuer(), "gpucloud-enrolment", null, ca)
                    .verifiedClaims(token)).as("no bearer: the API server answers 401")
                    .isInstanceOf(IOException.class).hasMessageContaining("answered 401");
            assertThatThrownBy(() -> TokenVerifier.forPrivateIssuer(cluster.issuer(), "gpucloud-enrolment", bearer,
                    null).verifiedClaims(token)).as("the JDK's CAs do not know the cluster's")
                    .isInstanceOf(IOException.class);
            assertThatThrownBy(() -> TokenVerifier.forPrivateIssuer(cluster.issuer(), "gpucloud", bearer, ca)
                    .verifiedClaims(token)).as("another audience")
                    .isInstanceOf(TokenVerifier.Refused.class);
        } finally {
            apiServer.stop(0);
        }
    }

    @Test
    void keysTheIssuerRefusesToServeAreItsFailureNotTheTokens() throws Exception {
        HttpServer half = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        DevIssuer cluster = DevIssuer.inMemory("http://127.0.0.1:" + half.getAddress().getPort());
        half.createContext("/", ex -> {
            boolean discovery = ex.getRequestURI().getPath().equals("/.well-known/openid-configuration");
            // a refusal whose body happens to parse as a key set (an empty one) must not pass for the issuer's keys
            byte[] bytes = (discovery ? cluster.discovery() : "{\"keys\":[]}")
                    .getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(discovery ? 200 : 403, bytes.length);
            try (var out = ex.getResponseBody()) {
                out.write(bytes);
            }
        });
        half.start();
        try {
            String token = cluster.mint("ops", List.of(), List.of("operator"), Duration.ofHours(1));

            assertThatThrownBy(() -> new TokenVerifier(cluster.issuer(), DevIssuer.AUDIENCE, DevIssuer.TENANTS_CLAIM,
                    DevIssuer.ROLES_CLAIM).verify(token))
                    .isInstanceOf(IOException.class).isNotInstanceOf(TokenVerifier.Refused.class)
                    .hasMessageContaining("could not be read");
        } finally {
            half.stop(0);
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(String.join(" ", command) + ": " + out).isZero();
    }

    private static String b64(String json) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
