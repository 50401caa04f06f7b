package dev.gpucloud.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jose4j.json.JsonUtil;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.consumer.InvalidJwtException;
import org.jose4j.jwt.consumer.JwtConsumer;
import org.jose4j.jwt.consumer.JwtConsumerBuilder;
import org.jose4j.keys.resolvers.JwksVerificationKeyResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DevIssuerTest {

    @TempDir
    Path dir;

    @Test
    void a_minted_token_verifies_against_the_served_key_set_and_carries_tenants_and_roles() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            DevIssuer issuer = DevIssuer.loadOrCreate(dir.resolve("issuer.jwk"), base);
            issuer.serveOn(server);
            String url = base;
            HttpClient http = HttpClient.newHttpClient();
            Map<String, Object> discovery = JsonUtil.parseJson(http.send(HttpRequest.newBuilder(
                    URI.create(url + "/.well-known/openid-configuration")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertThat(discovery).containsEntry("issuer", base).containsEntry("jwks_uri", base + "/jwks");
            String jwks = http.send(HttpRequest.newBuilder(URI.create(url + "/jwks")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(jwks).doesNotContain("\"d\"").doesNotContain("\"p\""); // never the private parts

            String token = issuer.mint("alice", List.of("acme"), List.of("member"), Duration.ofMinutes(5));
            JwtClaims claims = consumer(jwks, base).processToClaims(token);
            assertThat(claims.getSubject()).isEqualTo("alice");
            assertThat(claims.getStringListClaimValue(DevIssuer.TENANTS_CLAIM)).containsExactly("acme");
            assertThat(claims.getStringListClaimValue(DevIssuer.ROLES_CLAIM)).containsExactly("member");

            HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create(url + "/jwks"))
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(http.send(HttpRequest.newBuilder(URI.create(url + "/token")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
        } finally {
            server.stop(0);
        }
    }

    @Test
    void the_key_file_is_kept_private_and_reused() throws Exception {
        Path file = dir.resolve("auth/issuer.jwk");
        DevIssuer first = DevIssuer.loadOrCreate(file, "http://localhost:1");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        DevIssuer again = DevIssuer.loadOrCreate(file, "http://localhost:1");
        String token = first.mint("bob", List.of("globex"), List.of("operator"), Duration.ofMinutes(1));
        assertThat(consumer(again.jwks(), "http://localhost:1").processToClaims(token).getSubject()).isEqualTo("bob");
    }

    @Test
    void a_token_of_another_key_does_not_verify() {
        DevIssuer ours = DevIssuer.inMemory("http://localhost:1");
        DevIssuer theirs = DevIssuer.inMemory("http://localhost:1");
        String forged = theirs.mint("mallory", List.of("acme"), List.of("operator"), Duration.ofMinutes(1));
        assertThatThrownBy(() -> consumer(ours.jwks(), "http://localhost:1").processToClaims(forged))
                .isInstanceOf(InvalidJwtException.class);
    }

    @Test
    void a_file_that_is_not_a_key_is_refused_with_its_name() throws Exception {
        Path file = dir.resolve("bad.jwk");
        Files.writeString(file, "{\"kty\":\"oct\",\"k\":\"AAAA\"}");
        assertThatThrownBy(() -> DevIssuer.loadOrCreate(file, "http://localhost:1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad.jwk");
    }

    private static JwtConsumer consumer(String jwks, String issuer) throws Exception {
        return new JwtConsumerBuilder().setRequireExpirationTime().setExpectedIssuer(issuer)
                .setExpectedAudience(DevIssuer.AUDIENCE)
                .setVerificationKeyResolver(new JwksVerificationKeyResolver(new JsonWebKeySet(jwks).getJsonWebKeys()))
                .build();
    }

}
