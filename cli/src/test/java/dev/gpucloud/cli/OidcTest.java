package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The device authorization grant (RFC 8628) against a provider in this JVM: the polling rules, and a clear
 * failure for every answer that is not one. Time is the test's: every wait is recorded, none is waited out.
 */
class OidcTest {

    /** A clock that moves only when the code under test sleeps. */
    static final class FakeTicker implements dev.gpucloud.client.LeaderFailover.Clock {
        long now;
        final List<Duration> sleeps = new CopyOnWriteArrayList<>();

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void sleep(Duration duration) {
            sleeps.add(duration);
            now += duration.toNanos();
        }
    }

    FakeProvider provider;
    final FakeTicker ticker = new FakeTicker();
    Oidc oidc;

    @BeforeEach
    void start() throws Exception {
        provider = new FakeProvider();
        oidc = new Oidc(Oidc.http(null), ticker);
    }

    @AfterEach
    void stop() {
        provider.close();
    }

    private Oidc.Tokens login(String device) {
        if (device != null) {
            provider.device = device;
        }
        Oidc.Provider endpoints = oidc.discover(provider.issuer());
        return oidc.poll(endpoints, "gpucloud-cli", oidc.authorize(endpoints, "gpucloud-cli", "openid"));
    }

    private String device(String fields) {
        return "{\"device_code\":\"dev-123\",\"user_code\":\"ABCD-EFGH\",\"verification_uri\":\"" + provider.issuer()
                + "/device\"" + fields + "}";
    }

    @Test
    void polls_every_interval_until_the_user_approves() {
        provider.pending().pending().tokens("access-1", "refresh-1");
        Oidc.Tokens tokens = login(device(",\"expires_in\":600,\"interval\":3"));
        assertThat(tokens).isEqualTo(new Oidc.Tokens("access-1", "refresh-1"));
        assertThat(ticker.sleeps).containsExactly(Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ofSeconds(3));
        assertThat(provider.deviceRequests).singleElement().satisfies(form -> {
            assertThat(form).containsEntry("client_id", "gpucloud-cli").containsEntry("scope", "openid")
                    .containsEntry(":content-type", "application/x-www-form-urlencoded");
        });
        assertThat(provider.tokenRequests).hasSize(3).allSatisfy(form -> assertThat(form)
                .containsEntry("grant_type", "urn:ietf:params:oauth:grant-type:device_code")
                .containsEntry("device_code", "dev-123").containsEntry("client_id", "gpucloud-cli"));
    }

    @Test
    void without_an_interval_it_waits_five_seconds_and_never_less_than_one() {
        provider.tokens("a", null);
        assertThat(login(device(",\"expires_in\":600")).refreshToken()).isNull();
        assertThat(ticker.sleeps).containsExactly(Duration.ofSeconds(5));
        ticker.sleeps.clear();
        assertThat(login(device(",\"expires_in\":600,\"interval\":0")).accessToken()).isEqualTo("a");
        assertThat(ticker.sleeps).containsExactly(Duration.ofSeconds(1));
    }

    @Test
    void slow_down_adds_five_seconds_to_every_later_wait() {
        provider.pending().error("slow_down").pending().error("slow_down").tokens("a", "r");
        login(device(",\"expires_in\":600,\"interval\":2"));
        assertThat(ticker.sleeps).extracting(Duration::toSeconds).containsExactly(2L, 2L, 7L, 7L, 12L);
    }

    @Test
    void a_denial_stops_the_login() {
        provider.pending().error("access_denied");
        assertThatThrownBy(() -> login(null)).isInstanceOf(Oidc.Failure.class)
                .hasMessage("the login was denied at the provider (access_denied)");
        assertThat(provider.tokenRequests).hasSize(2);
    }

    @Test
    void an_expired_code_stops_the_login() {
        provider.pending().error("expired_token");
        assertThatThrownBy(() -> login(null)).isInstanceOf(Oidc.Failure.class)
                .hasMessage("the code ABCD-EFGH expired before it was approved (expired_token); run gpucloud login"
                        + " again");
    }

    @Test
    void it_gives_up_when_expires_in_has_passed_though_the_provider_still_says_pending() {
        provider.pending();
        assertThatThrownBy(() -> login(device(",\"expires_in\":12,\"interval\":5"))).isInstanceOf(Oidc.Failure.class)
                .hasMessage("the code ABCD-EFGH was not approved within 12 s; run gpucloud login again");
        assertThat(provider.tokenRequests).hasSize(2); // at 5 s and 10 s; at 15 s the code is gone
        assertThat(ticker.now).isEqualTo(Duration.ofSeconds(15).toNanos());
    }

    @Test
    void a_token_endpoint_that_does_not_answer_json_or_an_unknown_error_is_a_failure_that_says_what_came() {
        provider.pending().token(502, "<html><body>Bad Gateway</body></html>");
        assertThatThrownBy(() -> login(null)).isInstanceOf(Oidc.Failure.class)
                .hasMessage("the token endpoint " + provider.issuer() + "/token answered HTTP 502 with something that"
                        + " is not a JSON object: '<html><body>Bad Gateway</body></html>', not an OAuth answer");

        for (String error : List.of("invalid_client", "unsupported_grant_type")) {
            provider.reset().error(error);
            assertThatThrownBy(() -> login(null)).isInstanceOf(Oidc.Failure.class)
                    .hasMessage("the token endpoint " + provider.issuer() + "/token answered HTTP 400, an error this"
                            + " CLI does not know, error '" + error + "': as the test says");
        }
    }

    @Test
    void a_token_endpoint_without_an_error_code_or_without_an_access_token_is_a_failure() {
        provider.token(500, "{\"message\":\"oops\"}");
        assertThatThrownBy(() -> login(null)).hasMessage("the token endpoint " + provider.issuer() + "/token"
                + " answered HTTP 500 without an OAuth error code");
        provider.reset().token(200, "{\"token_type\":\"Bearer\"}");
        assertThatThrownBy(() -> login(null)).hasMessage("the token endpoint " + provider.issuer() + "/token"
                + " answered HTTP 200 without an access_token");
    }

    @Test
    void a_device_answer_without_a_user_code_or_a_refusal_is_a_failure() {
        provider.device = "{\"device_code\":\"d\",\"verification_uri\":\"" + provider.issuer() + "/device\"}";
        Oidc.Provider endpoints = oidc.discover(provider.issuer());
        assertThatThrownBy(() -> oidc.authorize(endpoints, "gpucloud-cli", "openid"))
                .isInstanceOf(Oidc.Failure.class).hasMessage("the device authorization endpoint " + provider.issuer()
                        + "/device/auth answered without user_code");
        provider.device = "{}";
        assertThatThrownBy(() -> oidc.authorize(endpoints, "gpucloud-cli", "openid"))
                .hasMessageEndingWith("answered without device_code, user_code, verification_uri");

        provider.deviceStatus = 401;
        provider.device = "{\"error\":\"unauthorized_client\",\"error_description\":\"Client is not allowed to"
                + " initiate OAuth 2.0 Device Authorization Grant\"}";
        assertThatThrownBy(() -> oidc.authorize(endpoints, "other", "openid"))
                .hasMessage("the provider refused the device authorization request for client 'other' (HTTP 401,"
                        + " error 'unauthorized_client': Client is not allowed to initiate OAuth 2.0 Device"
                        + " Authorization Grant)");
        assertThat(provider.tokenRequests).isEmpty();
    }

    @Test
    void google_s_verification_url_is_read_as_the_verification_uri() {
        provider.device = "{\"device_code\":\"d\",\"user_code\":\"U\",\"verification_url\":\"https://example.test/d\"}";
        Oidc.Provider endpoints = oidc.discover(provider.issuer());
        Oidc.DeviceCode code = oidc.authorize(endpoints, "c", "");
        assertThat(code.verificationUri()).isEqualTo("https://example.test/d");
        assertThat(code.verificationUriComplete()).isNull();
        assertThat(code.expiresIn()).isEqualTo(Oidc.DEFAULT_EXPIRY);
        assertThat(provider.deviceRequests.get(0)).doesNotContainKey("scope");
    }

    @Test
    void discovery_must_name_the_device_and_token_endpoints() {
        provider.discovery = "{\"issuer\":\"" + provider.issuer() + "\",\"token_endpoint\":\"" + provider.issuer()
                + "/token\",\"jwks_uri\":\"x\"}";
        assertThatThrownBy(() -> oidc.discover(provider.issuer())).isInstanceOf(Oidc.Failure.class)
                .hasMessage("the OIDC provider's discovery document " + provider.issuer() + "/.well-known/openid"
                        + "-configuration names no device_authorization_endpoint: the provider does not offer the"
                        + " device authorization grant (RFC 8628); the development issuer of ./gpucloud up has none"
                        + " either: log in there with --dev");
        provider.discovery = "{\"issuer\":\"x\"}";
        assertThatThrownBy(() -> oidc.discover(provider.issuer()))
                .hasMessageContaining("names no device_authorization_endpoint and no token_endpoint");
        provider.discovery = "{\"device_authorization_endpoint\":\"ftp://x/d\",\"token_endpoint\":\"http://x/t\"}";
        assertThatThrownBy(() -> oidc.discover(provider.issuer()))
                .hasMessageContaining("names a device_authorization_endpoint that is not an http(s) URL: 'ftp://x/d'");
        provider.discovery = "not json";
        assertThatThrownBy(() -> oidc.discover(provider.issuer() + "/"))
                .hasMessageContaining("configuration answered HTTP 200 with something that is not a JSON object:"
                        + " 'not json'");
        provider.discoveryStatus = 404;
        assertThatThrownBy(() -> oidc.discover(provider.issuer()))
                .hasMessageEndingWith("configuration answered HTTP 404: is --issuer the provider's issuer URL"
                        + " (Keycloak: https://HOST/realms/REALM)?");
    }

    @Test
    void an_unreachable_provider_is_named() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        assertThatThrownBy(() -> oidc.discover("http://127.0.0.1:" + port + "/realms/x"))
                .isInstanceOf(Oidc.Failure.class)
                .hasMessageStartingWith("cannot reach the OIDC provider's discovery document http://127.0.0.1:" + port
                        + "/realms/x/.well-known/openid-configuration (ConnectException");
        assertThatThrownBy(() -> oidc.discover("http://no-such-host.invalid/realms/x"))
                .hasMessageEndingWith("(ConnectException: unknown host)");
    }

    @Test
    void the_issuer_must_be_an_http_url() {
        for (String bad : List.of("ftp://example.test/realms/x", "localhost:8080", "", "https://", "http://h/x?a=b",
                "http://exa mple")) {
            assertThatThrownBy(() -> Oidc.issuerUri(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("--issuer must be the provider's http(s) issuer URL");
        }
        assertThat(Oidc.issuerUri("HTTPS://sso.example.test/realms/gpucloud")).hasHost("sso.example.test");
    }

    @Test
    void a_refresh_keeps_the_refresh_token_unless_the_provider_rotates_it() {
        provider.tokens("a2", null).tokens("a3", "r3").error("invalid_grant");
        URI endpoint = URI.create(provider.issuer() + "/token");
        assertThat(oidc.refresh(endpoint, "gpucloud-cli", "r1")).isEqualTo(new Oidc.Tokens("a2", "r1"));
        assertThat(oidc.refresh(endpoint, "gpucloud-cli", "r1")).isEqualTo(new Oidc.Tokens("a3", "r3"));
        assertThatThrownBy(() -> oidc.refresh(endpoint, "gpucloud-cli", "r3"))
                .hasMessage("the token endpoint " + endpoint + " refused the refresh token (HTTP 400, error"
                        + " 'invalid_grant': as the test says)");
        assertThat(provider.tokenRequests.get(0)).containsEntry("grant_type", "refresh_token")
                .containsEntry("refresh_token", "r1").containsEntry("client_id", "gpucloud-cli");
    }
}
