package dev.gpucloud.identity;

import dev.gpucloud.contracts.http.PemTrust;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jose4j.http.SimpleResponse;
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
 * Verifies bearer tokens outside Quarkus' OIDC extension, for a process too small to carry it (the node agent), and
 * for tokens of an issuer other than the API's (the scheduler checks Kubernetes service account tokens with it):
 * the issuer's keys are found through standard discovery ({@code /.well-known/openid-configuration} then its
 * {@code jwks_uri}, cached and refreshed when a token names a key not seen yet), and a token passes only if it is
 * signed by one of them with an asymmetric algorithm (never {@code none}, never HMAC), was issued by that issuer
 * for {@code audience}, and is within its validity (with 30 s of clock skew). The caller it describes comes from
 * the same claims the services read ({@link Caller#fromClaims}); a token that is not a user's gives its claims
 * ({@link #verifiedClaims}).
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
    private final Path bearerFile;
    private final HttpClient http;
    private volatile JwtConsumer consumer;

    public TokenVerifier(String issuer, String audience, String tenantsClaim, String rolesClaim) {
        this(issuer, audience, tenantsClaim, rolesClaim, null, HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5)).build());
    }

    private TokenVerifier(String issuer, String audience, String tenantsClaim, String rolesClaim, Path bearerFile,
            HttpClient http) {
        this.issuer = stripSlash(Objects.requireNonNull(issuer, "issuer"));
        this.audience = Objects.requireNonNull(audience, "audience");
        this.tenantsClaim = Objects.requireNonNull(tenantsClaim, "tenantsClaim");
        this.rolesClaim = Objects.requireNonNull(rolesClaim, "rolesClaim");
        this.bearerFile = bearerFile;
        this.http = http;
    }

    /**
     * A verifier of tokens for {@code audience} from an issuer that is not public: a Kubernetes API server serves
     * its discovery document and keys only to an authenticated caller, over TLS from the cluster's own CA. The
     * discovery document and the keys are fetched with {@code Authorization: Bearer} and the token in
     * {@code bearerFile} (read again on every fetch: the kubelet renews it; null: none sent), trusting only the
     * certificates in the PEM file {@code caFile} (null: the JDK's CAs).
     *
     * @throws IOException naming the CA file when it cannot be read
     */
    public static TokenVerifier forPrivateIssuer(String issuer, String audience, Path bearerFile, Path caFile)
            throws IOException {
        return new TokenVerifier(issuer, audience, DevIssuer.TENANTS_CLAIM, DevIssuer.ROLES_CLAIM, bearerFile,
                client(caFile));
    }

    /**
     * A verifier of API tokens, as {@link #TokenVerifier(String, String, String, String)}, from an issuer whose
     * certificate comes from the CA in the PEM file {@code caFile} and no other (the development issuer that
     * ./gpucloud up starts, with a certificate from the stack's CA); null: the JDK's CAs.
     *
     * @throws IOException naming the CA file when it cannot be read
     */
    public static TokenVerifier trusting(String issuer, String audience, String tenantsClaim, String rolesClaim,
            Path caFile) throws IOException {
        return new TokenVerifier(issuer, audience, tenantsClaim, rolesClaim, null, client(caFile));
    }

    private static HttpClient client(Path caFile) throws IOException {
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if (caFile != null) {
            http.sslContext(PemTrust.sslContext(caFile));
        }
        return http.build();
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
        JwtClaims claims = verifiedClaims(token);
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

    /**
     * The claims of a token that passed every check (signature, issuer, audience, validity, a subject), for a
     * caller that is not a user of the API (a Kubernetes service account): what they mean is the caller's to judge.
     *
     * @throws Refused the token is missing, oversized, or does not verify
     * @throws IOException the issuer's discovery document or keys could not be read
     */
    public JwtClaims verifiedClaims(String token) throws Refused, IOException {
        if (token == null || token.isBlank()) {
            throw new Refused("no bearer token");
        }
        if (token.length() > MAX_TOKEN_CHARS) {
            throw new Refused("the token is " + token.length() + " characters long, more than " + MAX_TOKEN_CHARS);
        }
        try {
            return consumer().processToClaims(token);
        } catch (InvalidJwtException e) {
            // the key resolver wraps a failure to fetch the keys; a key the issuer does not have is the token's fault
            if (e.getCause() instanceof UnresolvableKeyException unresolved && unresolved.getCause() != null) {
                throw new IOException("the keys of " + issuer + " could not be read: " + unresolved.getCause(), e);
            }
            throw new Refused("the token is not valid here (expired, not yet valid, not signed by the provider, or"
                    + " for another audience or issuer)");
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
                    keys.setSimpleHttpGet(this::get); // the same client, CA and bearer as discovery
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
        try {
            SimpleResponse response = get(discovery.toString());
            Map<String, Object> doc = JsonUtil.parseJson(response.getBody());
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
        }
    }

    /**
     * A GET of the issuer's discovery document or keys, with the bearer token where one is configured. Anything but
     * 200 is the issuer's failure (an IOException), never an empty key set that would make a good token look forged.
     */
    private SimpleResponse get(String location) throws IOException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(location)).timeout(Duration.ofSeconds(10)).GET();
        if (bearerFile != null) {
            request.header("Authorization", "Bearer " + Files.readString(bearerFile, StandardCharsets.US_ASCII).strip());
        }
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading " + location, e);
        }
        if (response.statusCode() != 200) {
            throw new IOException(location + " answered " + response.statusCode());
        }
        return new SimpleResponse() {
            @Override
            public int getStatusCode() {
                return response.statusCode();
            }

            @Override
            public String getStatusMessage() {
                return String.valueOf(response.statusCode());
            }

            @Override
            public Collection<String> getHeaderNames() {
                return response.headers().map().keySet();
            }

            @Override
            public List<String> getHeaderValues(String name) {
                return response.headers().allValues(name);
            }

            @Override
            public String getBody() {
                return response.body();
            }
        };
    }

    private static String stripSlash(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
