package dev.gpucloud.identity;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jose4j.json.JsonUtil;
import org.jose4j.jwa.AlgorithmConstraints;
import org.jose4j.jwk.HttpsJwks;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.MalformedClaimException;
import org.jose4j.jwt.consumer.InvalidJwtException;
import org.jose4j.jwt.consumer.JwtConsumer;
import org.jose4j.jwt.consumer.JwtConsumerBuilder;
import org.jose4j.keys.resolvers.HttpsJwksVerificationKeyResolver;
import org.jose4j.lang.JoseException;
import org.jose4j.lang.UnresolvableKeyException;

/**
 * Verifies bearer tokens outside Quarkus' OIDC extension, for a process too small to carry it (the node agent):
 * the issuer's keys are found through standard discovery ({@code /.well-known/openid-configuration} then its
 * {@code jwks_uri}, cached and refreshed when a token names a key not seen yet), and a token passes only if it is
 * signed by one of them with an asymmetric algorithm (never {@code none}, never HMAC), was issued by that issuer
 * for {@code audience}, and is within its validity (with 30 s of clock skew). The caller it describes comes from
 * the same claims the services read ({@link Caller#fromClaims}).
 */
public final class TokenVerifier {

    /** The longest token looked at: a real one is a few hundred bytes to a few KiB. */
    public static final int MAX_TOKEN_CHARS = 16 * 1024;
    private static final String[] ALGORITHMS = {AlgorithmIdentifiers.RSA_USING_SHA256,
        AlgorithmIdentifiers.RSA_USING_SHA384, AlgorithmIdentifiers.RSA_USING_SHA512,
        AlgorithmIdentifiers.RSA_PSS_USING_SHA256, AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256,
        AlgorithmIdentifiers.ECDSA_USING_P384_CURVE_AND_SHA384};

    /** Why a token was refused, in words for the caller; nothing of the token itself. */
    public static final class Refused extends Exception {
        public Refused(String message) {
            super(message);
        }
    }

    private final String issuer;
    private final String audience;
    private final String tenantsClaim;
    private final String rolesClaim;
    private volatile JwtConsumer consumer;

    public TokenVerifier(String issuer, String audience, String tenantsClaim, String rolesClaim) {
        this.issuer = stripSlash(Objects.requireNonNull(issuer, "issuer"));
        this.audience = Objects.requireNonNull(audience, "audience");
        this.tenantsClaim = Objects.requireNonNull(tenantsClaim, "tenantsClaim");
        this.rolesClaim = Objects.requireNonNull(rolesClaim, "rolesClaim");
    }

    public String issuer() {
        return issuer;
    }

    /**
     * The caller a token describes. Blocks on the first call (and when a token names a key not seen yet) to read
     * the issuer's discovery document and keys.
     *
     * @throws Refused what is wrong with the token: missing, oversized, not signed by the issuer, expired, for
     *         another audience or issuer, or with a malformed tenants claim
     * @throws IOException the issuer could not be reached
     */
    public Caller verify(String token) throws Refused, IOException {
        if (token == null || token.isBlank()) {
            throw new Refused("no bearer token");
        }
        if (token.length() > MAX_TOKEN_CHARS) {
            throw new Refused("the token is " + token.length() + " characters long, more than " + MAX_TOKEN_CHARS);
        }
        JwtClaims claims;
        try {
            claims = consumer().processToClaims(token);
        } catch (InvalidJwtException e) {
            // the key resolver wraps a failure to fetch the keys; a key the issuer does not have is the token's fault
            if (e.getCause() instanceof UnresolvableKeyException unresolved && unresolved.getCause() != null) {
                throw new IOException("the keys of " + issuer + " could not be read: " + unresolved.getCause(), e);
            }
            throw new Refused("the token is not valid here (expired, not yet valid, not signed by the provider, or"
                    + " for another audience or issuer)");
        }
        try {
            String subject = claims.getSubject();
            if (subject == null || subject.isBlank()) {
                throw new Refused("the token names no subject");
            }
            return Caller.fromClaims(subject, tenantsClaim, claims.getClaimValue(tenantsClaim), roles(claims));
        } catch (MalformedClaimException | IllegalArgumentException e) {
            throw new Refused(e.getMessage());
        }
    }

    private List<String> roles(JwtClaims claims) {
        Object value = claims.getClaimValue(rolesClaim);
        List<String> roles = new ArrayList<>();
        if (value instanceof String single) {
            roles.add(single);
        } else if (value instanceof Iterable<?> many) {
            many.forEach(r -> roles.add(String.valueOf(r)));
        }
        return roles;
    }

    private JwtConsumer consumer() throws IOException {
        JwtConsumer c = consumer;
        if (c == null) {
            synchronized (this) {
                if (consumer == null) {
                    HttpsJwks keys = new HttpsJwks(jwksUri());
                    consumer = new JwtConsumerBuilder()
                            .setRequireExpirationTime()
                            .setAllowedClockSkewInSeconds(30)
                            .setRequireSubject()
                            .setExpectedIssuer(issuer)
                            .setExpectedAudience(audience)
                            .setJwsAlgorithmConstraints(AlgorithmConstraints.ConstraintType.PERMIT, ALGORITHMS)
                            .setVerificationKeyResolver(new HttpsJwksVerificationKeyResolver(keys))
                            .build();
                }
                c = consumer;
            }
        }
        return c;
    }

    /** The issuer's {@code jwks_uri}, from its discovery document. */
    private String jwksUri() throws IOException {
        URI discovery = URI.create(issuer + "/.well-known/openid-configuration");
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(discovery).timeout(Duration.ofSeconds(10))
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IOException(discovery + " answered " + response.statusCode());
            }
            Map<String, Object> doc = JsonUtil.parseJson(response.body());
            if (!issuer.equals(stripSlash(String.valueOf(doc.get("issuer"))))) {
                throw new IOException(discovery + " names issuer '" + doc.get("issuer") + "', not '" + issuer + "'");
            }
            Object jwks = doc.get("jwks_uri");
            if (!(jwks instanceof String uri) || uri.isBlank()) {
                throw new IOException(discovery + " has no jwks_uri");
            }
            return uri;
        } catch (JoseException e) {
            throw new IOException(discovery + " is not a JSON object: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading " + discovery, e);
        }
    }

    private static String stripSlash(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
