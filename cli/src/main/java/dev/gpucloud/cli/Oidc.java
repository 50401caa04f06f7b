package dev.gpucloud.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The CLI's side of an OpenID Connect provider: its discovery document, the OAuth 2.0 device authorization
 * grant (RFC 8628) that {@code gpucloud login --issuer URL} runs, and the refresh grant that later commands use
 * when the stored access token has expired. The JDK's HTTP client and Jackson, nothing else.
 */
final class Oidc {

    static final String DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
    /** RFC 8628 3.2: without an interval the client waits 5 s between polls ... */
    static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);
    /** ... and 5 s more after every slow_down (3.5). */
    static final Duration SLOW_DOWN = Duration.ofSeconds(5);
    /** The least wait between polls, whatever the provider says: an interval of 0 must not hammer it. */
    static final Duration MIN_INTERVAL = Duration.ofSeconds(1);
    /** expires_in is required; a provider that leaves it out gets this long. */
    static final Duration DEFAULT_EXPIRY = Duration.ofMinutes(10);
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What went wrong, in one line that the CLI prints as it is (exit 1). */
    static final class Failure extends RuntimeException {
        Failure(String message) {
            super(message, null, false, false);
        }
    }

    /** The provider's endpoints, from its discovery document. */
    record Provider(String issuer, URI deviceEndpoint, URI tokenEndpoint) {
    }

    /** The device authorization response (RFC 8628 3.2). */
    record DeviceCode(String deviceCode, String userCode, String verificationUri, String verificationUriComplete,
            Duration expiresIn, Duration interval) {
    }

    /** An access token and, where the provider issued one, a refresh token. */
    record Tokens(String accessToken, String refreshToken) {
    }

    private final HttpClient http;
    /** Time, so that tests need not wait out a provider's intervals (the retry loop's clock). */
    private final dev.gpucloud.client.LeaderFailover.Clock ticker;

    Oidc(HttpClient http, dev.gpucloud.client.LeaderFailover.Clock ticker) {
        this.http = http;
        this.ticker = ticker;
    }

    /**
     * An HTTP client that trusts the JVM's certificate authorities and, where {@code caFile} names a PEM file,
     * those in it too (the stack's own CA, when ./gpucloud passes GPUCLOUD_CA_FILE).
     */
    static HttpClient http(Path caFile) {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NORMAL);
        if (caFile != null) {
            builder.sslContext(trusting(caFile));
        }
        return builder.build();
    }

    /** TLS that trusts the JVM's certificate authorities plus the ones in {@code pem}. */
    static SSLContext trusting(Path pem) {
        Collection<? extends Certificate> extra;
        try (InputStream in = Files.newInputStream(pem)) {
            extra = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read a PEM certificate from " + pem + " (" + reason(e) + ")");
        }
        if (extra.isEmpty()) {
            throw new IllegalArgumentException("no PEM certificate in " + pem);
        }
        try {
            KeyStore anchors = KeyStore.getInstance(KeyStore.getDefaultType());
            anchors.load(null, null);
            int n = 0;
            for (Certificate certificate : extra) {
                anchors.setCertificateEntry("ca-file-" + n++, certificate);
            }
            TrustManagerFactory jvm = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            jvm.init((KeyStore) null);
            for (TrustManager manager : jvm.getTrustManagers()) {
                if (manager instanceof X509TrustManager x509) {
                    for (X509Certificate certificate : x509.getAcceptedIssuers()) {
                        anchors.setCertificateEntry("jvm-" + n++, certificate);
                    }
                }
            }
            TrustManagerFactory both = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            both.init(anchors);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, both.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot trust the certificates in " + pem + " (" + reason(e) + ")");
        }
    }

    /** The issuer URL, checked: http or https, with a host. */
    static URI issuerUri(String issuer) {
        String text = issuer == null ? "" : issuer.strip();
        try {
            URI uri = new URI(text);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null && uri.getQuery() == null
                    && uri.getFragment() == null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // said below
        }
        throw new IllegalArgumentException("--issuer must be the provider's http(s) issuer URL (Keycloak:"
                + " https://HOST/realms/REALM), was '" + text + "'");
    }

    /** The provider's discovery document: it must name a device authorization endpoint and a token endpoint. */
    Provider discover(String issuer) {
        String base = issuer.strip().replaceAll("/+$", "");
        URI url = discoveryUrl(issuer);
        String what = "the OIDC provider's discovery document " + url;
        JsonNode document = discovery(issuer);
        List<String> missing = new ArrayList<>();
        for (String name : List.of("device_authorization_endpoint", "token_endpoint")) {
            if (text(document, name) == null) {
                missing.add(name);
            }
        }
        if (!missing.isEmpty()) {
            throw new Failure(what + " names no " + String.join(" and no ", missing) + ": the provider does not offer"
                    + " the device authorization grant (RFC 8628)" + (missing.contains("device_authorization_endpoint")
                    ? "; the development issuer of ./gpucloud up has none either: log in there with --dev" : ""));
        }
        return new Provider(base, endpoint(document, "device_authorization_endpoint", url),
                endpoint(document, "token_endpoint", url));
    }

    /** Where {@code issuer}'s discovery document is (after checking that it is an http(s) issuer URL). */
    private static URI discoveryUrl(String issuer) {
        issuerUri(issuer);
        return URI.create(issuer.strip().replaceAll("/+$", "") + "/.well-known/openid-configuration");
    }

    /** The provider's discovery document, as a JSON object, or a failure that says what came instead. */
    private JsonNode discovery(String issuer) {
        URI url = discoveryUrl(issuer);
        String what = "the OIDC provider's discovery document " + url;
        HttpResponse<String> response = send(HttpRequest.newBuilder(url).header("Accept", "application/json").GET(),
                what);
        if (response.statusCode() != 200) {
            throw new Failure(what + " answered HTTP " + response.statusCode() + ": is --issuer the provider's issuer"
                    + " URL (Keycloak: https://HOST/realms/REALM)?");
        }
        return json(response, what);
    }

    /** Asks for a device code and the user code to show (RFC 8628 3.1). */
    DeviceCode authorize(Provider provider, String clientId, String scope) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("client_id", clientId);
        if (scope != null && !scope.isBlank()) {
            form.put("scope", scope.strip());
        }
        String what = "the device authorization endpoint " + provider.deviceEndpoint();
        HttpResponse<String> response = send(post(provider.deviceEndpoint(), form), what);
        JsonNode body = json(response, what);
        if (response.statusCode() != 200) {
            throw new Failure("the provider refused the device authorization request for client '" + clientId
                    + "' (HTTP " + response.statusCode() + oauthError(body) + ")");
        }
        String deviceCode = text(body, "device_code");
        String userCode = text(body, "user_code");
        // verification_url: Google's name for it
        String verificationUri = text(body, "verification_uri") != null ? text(body, "verification_uri")
                : text(body, "verification_url");
        List<String> missing = new ArrayList<>();
        if (deviceCode == null) {
            missing.add("device_code");
        }
        if (userCode == null) {
            missing.add("user_code");
        }
        if (verificationUri == null) {
            missing.add("verification_uri");
        }
        if (!missing.isEmpty()) {
            throw new Failure(what + " answered without " + String.join(", ", missing));
        }
        Duration expiresIn = seconds(body, "expires_in", DEFAULT_EXPIRY);
        Duration interval = seconds(body, "interval", DEFAULT_INTERVAL);
        return new DeviceCode(deviceCode, userCode, verificationUri, text(body, "verification_uri_complete"),
                expiresIn, interval.compareTo(MIN_INTERVAL) < 0 ? MIN_INTERVAL : interval);
    }

    /**
     * Polls the token endpoint until the user approves (RFC 8628 3.4, 3.5): every interval, 5 s more after each
     * slow_down; gives up on access_denied, expired_token, any other error, or when the code's expires_in has
     * passed.
     */
    Tokens poll(Provider provider, String clientId, DeviceCode code) {
        long started = ticker.nanoTime();
        long deadline = started + code.expiresIn().toNanos();
        Duration interval = code.interval();
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", DEVICE_GRANT);
        form.put("device_code", code.deviceCode());
        form.put("client_id", clientId);
        String what = "the token endpoint " + provider.tokenEndpoint();
        while (true) {
            try {
                ticker.sleep(interval);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Failure("interrupted while waiting for the login to be approved");
            }
            if (ticker.nanoTime() - deadline >= 0) {
                throw new Failure("the code " + code.userCode() + " was not approved within "
                        + code.expiresIn().toSeconds() + " s; run gpucloud login again");
            }
            HttpResponse<String> response = send(post(provider.tokenEndpoint(), form), what);
            JsonNode body = json(response, what);
            if (response.statusCode() == 200) {
                return tokens(body, what);
            }
            String error = text(body, "error");
            switch (error == null ? "" : error) {
                case "authorization_pending" -> {
                }
                case "slow_down" -> interval = interval.plus(SLOW_DOWN);
                case "access_denied" -> throw new Failure("the login was denied at the provider (access_denied)");
                case "expired_token" -> throw new Failure("the code " + code.userCode() + " expired before it was"
                        + " approved (expired_token); run gpucloud login again");
                default -> throw new Failure(what + " answered HTTP " + response.statusCode()
                        + (error == null ? " without an OAuth error code" : ", an error this CLI does not know")
                        + oauthError(body));
            }
        }
    }

    /**
     * Revokes a refresh token at the provider (RFC 7009), whose discovery document names the revocation endpoint
     * (RFC 8414). Returns the endpoint that took it; a provider that names none, or one that refuses, is a failure
     * that says so: the token then stays valid there until it expires.
     */
    URI revoke(String issuer, String clientId, String refreshToken) {
        URI url = discoveryUrl(issuer);
        String what = "the OIDC provider's discovery document " + url;
        JsonNode document = discovery(issuer);
        if (text(document, "revocation_endpoint") == null) {
            throw new Failure(what + " names no revocation_endpoint (RFC 7009)");
        }
        URI endpoint = endpoint(document, "revocation_endpoint", url);
        Map<String, String> form = new LinkedHashMap<>();
        form.put("token", refreshToken);
        form.put("token_type_hint", "refresh_token");
        form.put("client_id", clientId);
        String revocation = "the revocation endpoint " + endpoint;
        HttpResponse<String> answer = send(post(endpoint, form), revocation);
        // RFC 7009 2.2: 200 whether or not the token was still valid; an unknown token is not an error
        if (answer.statusCode() != 200) {
            throw new Failure(revocation + " refused (HTTP " + answer.statusCode() + oauthError(parsed(answer)) + ")");
        }
        return endpoint;
    }

    /** The body as JSON where it is; an empty object otherwise (an error answer need not carry one). */
    private static JsonNode parsed(HttpResponse<String> response) {
        try {
            JsonNode node = JSON.readTree(response.body());
            return node != null && node.isObject() ? node : JSON.createObjectNode();
        } catch (IOException e) {
            return JSON.createObjectNode();
        }
    }

    /** A new access token for a refresh token (RFC 6749 6); a provider that rotates it returns a new one. */
    Tokens refresh(URI tokenEndpoint, String clientId, String refreshToken) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "refresh_token");
        form.put("refresh_token", refreshToken);
        form.put("client_id", clientId);
        String what = "the token endpoint " + tokenEndpoint;
        HttpResponse<String> response = send(post(tokenEndpoint, form), what);
        JsonNode body = json(response, what);
        if (response.statusCode() != 200) {
            throw new Failure(what + " refused the refresh token (HTTP " + response.statusCode() + oauthError(body)
                    + ")");
        }
        Tokens tokens = tokens(body, what);
        return tokens.refreshToken() != null ? tokens : new Tokens(tokens.accessToken(), refreshToken);
    }

    private static Tokens tokens(JsonNode body, String what) {
        String access = text(body, "access_token");
        if (access == null) {
            throw new Failure(what + " answered HTTP 200 without an access_token");
        }
        return new Tokens(access, text(body, "refresh_token"));
    }

    private HttpResponse<String> send(HttpRequest.Builder request, String what) {
        try {
            return http.send(request.timeout(REQUEST_TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            throw new Failure("no answer from " + what + " within " + REQUEST_TIMEOUT.toSeconds() + " s");
        } catch (IOException e) {
            throw new Failure("cannot reach " + what + " (" + reason(e) + ")" + (sslProblem(e) ? "; --ca-file (env"
                    + " GPUCLOUD_CA_FILE) names a certificate authority to trust besides the JVM's" : ""));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted while waiting for " + what);
        }
    }

    private static HttpRequest.Builder post(URI uri, Map<String, String> form) {
        String body = form.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
                + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
        return HttpRequest.newBuilder(uri).header("Content-Type", "application/x-www-form-urlencoded")
                .header("Accept", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    }

    /** The body as a JSON object, or a failure that says what came instead. */
    private static JsonNode json(HttpResponse<String> response, String what) {
        String body = response.body() == null ? "" : response.body();
        try {
            JsonNode node = JSON.readTree(body);
            if (node != null && node.isObject()) {
                return node;
            }
        } catch (JsonProcessingException e) {
            // said below
        }
        String start = body.strip().replaceAll("\\s+", " ");
        throw new Failure(what + " answered HTTP " + response.statusCode() + " with " + (start.isEmpty()
                ? "an empty body" : "something that is not a JSON object: '"
                + (start.length() > 120 ? start.substring(0, 120) + "..." : start) + "'") + ", not an OAuth answer");
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isTextual() && !value.asText().isBlank() ? value.asText() : null;
    }

    private static Duration seconds(JsonNode node, String field, Duration otherwise) {
        JsonNode value = node.get(field);
        if (value != null && value.canConvertToLong() && value.asLong() >= 0) {
            return Duration.ofSeconds(value.asLong());
        }
        if (value != null && value.isTextual() && value.asText().matches("\\d{1,9}")) {
            return Duration.ofSeconds(Long.parseLong(value.asText()));
        }
        return otherwise;
    }

    private static URI endpoint(JsonNode document, String name, URI from) {
        String value = text(document, name);
        try {
            URI uri = new URI(value);
            if (("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                    && uri.getHost() != null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // said below
        }
        throw new Failure("the discovery document " + from + " names a " + name + " that is not an http(s) URL: '"
                + value + "'");
    }

    /** {@code , error 'x': description} from an OAuth error answer, or nothing. */
    private static String oauthError(JsonNode body) {
        String error = text(body, "error");
        String description = text(body, "error_description");
        return (error == null ? "" : ", error '" + error + "'") + (description == null ? "" : ": " + description);
    }

    private static boolean sslProblem(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The exception in one line: its class and the first message along its causes (the JDK HTTP client's
     * ConnectException has none of its own; an unknown host has none at all).
     */
    static String reason(Throwable e) {
        String message = null;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.nio.channels.UnresolvedAddressException) {
                message = "unknown host";
                break;
            }
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                message = GpucloudCli.firstLine(t.getMessage());
                break;
            }
        }
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
