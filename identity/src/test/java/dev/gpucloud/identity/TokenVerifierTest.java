package dev.gpucloud.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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

    private static String b64(String json) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
