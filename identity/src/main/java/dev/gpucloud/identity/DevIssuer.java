package dev.gpucloud.identity;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import org.jose4j.json.JsonUtil;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.PublicJsonWebKey;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.jose4j.lang.JoseException;

/**
 * The development issuer: an OIDC provider reduced to what a service needs to verify tokens (the discovery
 * document and the JWK set, served on loopback by {@link #serve}) plus minting, which needs the private key
 * file and so stays with whoever started the stack (the file is readable by its owner only). The services do
 * not know it is a development issuer: they find its keys through standard discovery, as they would
 * Keycloak's, Okta's or Entra's.
 *
 * <p>Tokens carry the subject, the audience {@value #AUDIENCE}, the tenants in {@value #TENANTS_CLAIM} and the
 * roles in {@code groups} (the MicroProfile JWT claim that quarkus-oidc reads roles from).
 */
public final class DevIssuer {

    public static final String AUDIENCE = "gpucloud";
    public static final String TENANTS_CLAIM = "gpucloud_tenants";
    public static final String ROLES_CLAIM = "groups";
    public static final Duration DEFAULT_TTL = Duration.ofHours(12);

    private final String issuer;
    private final RsaJsonWebKey key;

    private DevIssuer(String issuer, RsaJsonWebKey key) {
        this.issuer = issuer;
        this.key = key;
    }

    /** An issuer with a new key that lives only in memory (tests). */
    public static DevIssuer inMemory(String issuer) {
        return new DevIssuer(issuer, newKey());
    }

    /**
     * The issuer whose private key is in {@code keyFile}; the file is created (owner read/write only) with a new
     * key if it does not exist yet.
     */
    public static DevIssuer loadOrCreate(Path keyFile, String issuer) {
        try {
            if (Files.exists(keyFile)) {
                PublicJsonWebKey jwk = PublicJsonWebKey.Factory.newPublicJwk(Files.readString(keyFile));
                if (!(jwk instanceof RsaJsonWebKey rsa) || rsa.getPrivateKey() == null) {
                    throw new IllegalArgumentException(keyFile + " does not hold an RSA private key");
                }
                return new DevIssuer(issuer, rsa);
            }
            RsaJsonWebKey key = newKey();
            Files.createDirectories(keyFile.toAbsolutePath().getParent());
            Files.writeString(keyFile, key.toJson(JsonWebKey.OutputControlLevel.INCLUDE_PRIVATE),
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try {
                Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException notPosix) {
                // a file system without owners: nothing more to restrict
            }
            return new DevIssuer(issuer, key);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or write the issuer key " + keyFile, e);
        } catch (JoseException e) {
            throw new IllegalArgumentException(keyFile + " is not a JSON Web Key: " + e.getMessage(), e);
        }
    }

    private static RsaJsonWebKey newKey() {
        try {
            RsaJsonWebKey key = RsaJwkGenerator.generateJwk(2048);
            key.setKeyId(UUID.randomUUID().toString().substring(0, 8));
            key.setAlgorithm(AlgorithmIdentifiers.RSA_USING_SHA256);
            key.setUse("sig");
            return key;
        } catch (JoseException e) {
            throw new IllegalStateException("cannot generate an RSA key", e);
        }
    }

    public String issuer() {
        return issuer;
    }

    /** A token for {@code subject} with these tenants and role names, valid from now for {@code ttl}. */
    public String mint(String subject, Collection<String> tenants, Collection<String> roles, Duration ttl) {
        return sign(claims(subject, tenants, roles, Instant.now(), ttl));
    }

    /** The claims {@link #mint} signs; tests change them to build tokens that must be refused. */
    public JwtClaims claims(String subject, Collection<String> tenants, Collection<String> roles, Instant now,
            Duration ttl) {
        JwtClaims claims = new JwtClaims();
        claims.setIssuer(issuer);
        claims.setAudience(AUDIENCE);
        claims.setSubject(subject);
        claims.setClaim("preferred_username", subject);
        claims.setStringListClaim(TENANTS_CLAIM, new ArrayList<>(tenants));
        claims.setStringListClaim(ROLES_CLAIM, new ArrayList<>(roles));
        claims.setIssuedAt(NumericDate.fromMilliseconds(now.toEpochMilli()));
        claims.setNotBefore(NumericDate.fromMilliseconds(now.toEpochMilli()));
        claims.setExpirationTime(NumericDate.fromMilliseconds(now.plus(ttl).toEpochMilli()));
        claims.setJwtId(UUID.randomUUID().toString());
        return claims;
    }

    /** {@code claims} signed with this issuer's key (RS256, its key id in the header). */
    public String sign(JwtClaims claims) {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKey(key.getPrivateKey());
        jws.setKeyIdHeaderValue(key.getKeyId());
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
        jws.setHeader("typ", "JWT");
        try {
            return jws.getCompactSerialization();
        } catch (JoseException e) {
            throw new IllegalStateException("cannot sign a token", e);
        }
    }

    /** The public JWK set, as {@code jwks_uri} serves it. */
    public String jwks() {
        return new JsonWebKeySet(key).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY);
    }

    /** The discovery document, as {@code /.well-known/openid-configuration} serves it. */
    public String discovery() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("issuer", issuer);
        doc.put("jwks_uri", issuer + "/jwks");
        doc.put("subject_types_supported", List.of("public"));
        doc.put("response_types_supported", List.of("id_token"));
        doc.put("id_token_signing_alg_values_supported", List.of(AlgorithmIdentifiers.RSA_USING_SHA256));
        doc.put("claims_supported", List.of("sub", "aud", "iss", "exp", "iat", "nbf", "preferred_username",
                TENANTS_CLAIM, ROLES_CLAIM));
        return JsonUtil.toJson(doc);
    }

    /**
     * Serves discovery and the JWK set at {@code address} until the returned server is stopped. Anything else is
     * 404, and anything but GET or HEAD 405: there is nothing to post to, since minting needs the key file.
     */
    public HttpServer serve(InetSocketAddress address) throws IOException {
        return serveOn(HttpServer.create(address, 64));
    }

    /** Serves on a server already bound (to learn its port before the issuer's URL is fixed), and starts it. */
    public HttpServer serveOn(HttpServer server) {
        server.createContext("/", this::handle);
        server.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "dev-issuer");
            t.setDaemon(true);
            return t;
        }));
        server.start();
        return server;
    }

    /**
     * For scripts that have no CLI at hand (the load benchmark):
     * {@code serve PORT KEY_FILE} serves until killed; {@code mint KEY_FILE ISSUER SUBJECT TENANTS ROLES HOURS}
     * prints a token (TENANTS and ROLES comma-separated, "-" for none).
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("serve")) {
            int port = Integer.parseInt(args[1]);
            loadOrCreate(Path.of(args[2]), "http://localhost:" + port)
                    .serve(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port));
            Thread.currentThread().join();
        } else if (args.length == 7 && args[0].equals("mint")) {
            System.out.println(loadOrCreate(Path.of(args[1]), args[2]).mint(args[3], list(args[4]), list(args[5]),
                    Duration.ofHours(Long.parseLong(args[6]))));
        } else {
            System.err.println("usage: DevIssuer serve PORT KEY_FILE | mint KEY_FILE ISSUER SUBJECT TENANTS ROLES HOURS");
            System.exit(2);
        }
    }

    private static List<String> list(String commaSeparated) {
        return commaSeparated.equals("-") ? List.of() : List.of(commaSeparated.split(","));
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            String path = exchange.getRequestURI().getPath();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                send(exchange, 405, "{\"error\":\"method_not_allowed\",\"detail\":\"only GET is served\"}");
            } else if (path.equals("/.well-known/openid-configuration")) {
                send(exchange, 200, discovery());
            } else if (path.equals("/jwks")) {
                send(exchange, 200, jwks());
            } else {
                send(exchange, 404, "{\"error\":\"not_found\",\"detail\":\"this issuer serves "
                        + "/.well-known/openid-configuration and /jwks\"}");
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
