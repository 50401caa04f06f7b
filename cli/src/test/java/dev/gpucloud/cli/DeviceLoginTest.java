package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gpucloud login --issuer URL} end to end in this JVM: a provider in the JDK's HTTP server, the CLI as a
 * user runs it, and a gRPC server that records the token each later call carries. The provider asks for a 1 s
 * interval, the least the CLI waits, so each login here takes a second or two.
 */
class DeviceLoginTest {

    @TempDir
    Path dir;
    FakeProvider provider;
    RecordingScheduler scheduler;
    List<String> authorizations;

    @BeforeEach
    void start() throws Exception {
        System.setProperty("gpucloud.home", dir.resolve("home").toString());
        provider = new FakeProvider();
        scheduler = new RecordingScheduler();
        authorizations = scheduler.authorizations;
    }

    @AfterEach
    void stop() throws InterruptedException {
        System.clearProperty("gpucloud.home");
        provider.close();
        scheduler.close();
    }

    @Test
    void the_device_flow_prints_where_to_approve_then_stores_both_tokens_privately() throws Exception {
        String access = FakeProvider.jwt("alice", "acme", Instant.now().plusSeconds(3600).getEpochSecond());
        provider.pending().tokens(access, "refresh-1");

        GpucloudCliTest.Result login = cli("--profile", "acme", "login", "--issuer", provider.issuer() + "/");

        assertThat(login.code()).as(login.err()).isZero();
        assertThat(login.err()).contains("to log in, open " + provider.issuer() + "/device and enter code ABCD-EFGH\n")
                .contains("(or open " + provider.issuer() + "/device?user_code=ABCD-EFGH, which carries the code)")
                .contains("waiting for the approval at " + provider.issuer() + " (the code expires in 600 s)");
        assertThat(login.out()).startsWith("logged in as 'alice' (member of acme), until ")
                .contains("acme.token (profile acme)");
        assertThat(provider.deviceRequests).singleElement().satisfies(form -> assertThat(form)
                .containsEntry("client_id", "gpucloud-cli").containsEntry("scope", "openid"));
        assertThat(provider.tokenRequests).hasSize(2);

        Path token = dir.resolve("home/profiles/acme.token");
        Path refresh = dir.resolve("home/profiles/acme.refresh.json");
        assertThat(Files.readString(token)).isEqualTo(access + "\n");
        assertThat(Files.readString(refresh)).contains("\"refresh_token\" : \"refresh-1\"")
                .contains("\"client_id\" : \"gpucloud-cli\"")
                .contains("\"token_endpoint\" : \"" + provider.issuer() + "/token\"")
                .contains("\"issuer\" : \"" + provider.issuer() + "\"");
        for (Path file : List.of(token, refresh)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        }
        assertThat(cli("--profile", "acme", "jobs").code()).isZero();
        assertThat(authorizations).containsExactly("Bearer " + access);

        // a token stored as given has nothing to refresh with: the refresh token goes
        assertThat(cli("--profile", "acme", "login", "--token", "aaa.bbb.ccc").code()).isZero();
        assertThat(refresh).doesNotExist();
    }

    @Test
    void a_later_command_refreshes_an_expired_token_and_keeps_the_rotated_refresh_token() throws Exception {
        String expired = FakeProvider.jwt("alice", "acme", Instant.now().minusSeconds(60).getEpochSecond());
        String fresh = FakeProvider.jwt("alice", "acme", Instant.now().plusSeconds(3600).getEpochSecond());
        provider.tokens(expired, "refresh-1");
        assertThat(cli("login", "--issuer", provider.issuer(), "--client-id", "my-cli", "--scope", "openid groups")
                .code()).isZero();
        assertThat(provider.deviceRequests.get(0)).containsEntry("client_id", "my-cli")
                .containsEntry("scope", "openid groups");

        provider.reset().tokens(fresh, "refresh-2");
        GpucloudCliTest.Result jobs = cli("jobs");
        assertThat(jobs.code()).as(jobs.err()).isZero();
        assertThat(jobs.err()).isEmpty();
        assertThat(provider.tokenRequests).singleElement().satisfies(form -> assertThat(form)
                .containsEntry("grant_type", "refresh_token").containsEntry("refresh_token", "refresh-1")
                .containsEntry("client_id", "my-cli"));
        assertThat(authorizations).containsExactly("Bearer " + fresh);
        assertThat(Files.readString(dir.resolve("home/profiles/default.token"))).isEqualTo(fresh + "\n");
        assertThat(Files.readString(dir.resolve("home/profiles/default.refresh.json"))).contains("refresh-2");

        // still valid: no refresh
        provider.reset();
        assertThat(cli("whoami").out()).startsWith("'alice' (member of acme)");
        assertThat(provider.tokenRequests).isEmpty();
    }

    @Test
    void logout_revokes_the_refresh_token_at_the_provider_then_forgets_both_files() throws Exception {
        String access = FakeProvider.jwt("alice", "acme", Instant.now().plusSeconds(3600).getEpochSecond());
        provider.tokens(access, "refresh-1");
        assertThat(cli("--profile", "acme", "login", "--issuer", provider.issuer(), "--client-id", "my-cli").code())
                .isZero();

        GpucloudCliTest.Result logout = cli("--profile", "acme", "logout");

        assertThat(logout.code()).as(logout.err()).isZero();
        assertThat(provider.revocations).singleElement().satisfies(form -> assertThat(form)
                .containsEntry("token", "refresh-1").containsEntry("token_type_hint", "refresh_token")
                .containsEntry("client_id", "my-cli")
                .containsEntry(":content-type", "application/x-www-form-urlencoded"));
        assertThat(logout.out()).contains("revoked the refresh token at " + provider.issuer() + "/revoke")
                .contains("logged out of profile acme");
        assertThat(dir.resolve("home/profiles/acme.token")).doesNotExist();
        assertThat(dir.resolve("home/profiles/acme.refresh.json")).doesNotExist();
        assertThat(cli("--profile", "acme", "whoami").code()).isEqualTo(1);
        // again: nothing left to forget, and the provider is not asked
        assertThat(cli("--profile", "acme", "logout").out()).contains("not logged in (profile acme)");
        assertThat(provider.revocations).hasSize(1);
    }

    @Test
    void a_refused_revocation_is_said_and_exits_non_zero_but_the_files_still_go() throws Exception {
        String access = FakeProvider.jwt("alice", "acme", Instant.now().plusSeconds(3600).getEpochSecond());
        provider.tokens(access, "refresh-1");
        assertThat(cli("login", "--issuer", provider.issuer()).code()).isZero();
        provider.revocationStatus = 400;

        GpucloudCliTest.Result logout = cli("logout");

        assertThat(logout.code()).isEqualTo(1);
        assertThat(logout.err()).contains("could not revoke the refresh token at " + provider.issuer())
                .contains("HTTP 400").contains("unsupported_token_type").contains("stays valid there until it expires");
        assertThat(dir.resolve("home/profiles/default.token")).doesNotExist();
        assertThat(dir.resolve("home/profiles/default.refresh.json")).doesNotExist();
    }

    @Test
    void a_refresh_that_fails_says_so_and_the_call_goes_out_with_the_old_token() throws Exception {
        String expired = FakeProvider.jwt("alice", "acme", Instant.now().minusSeconds(60).getEpochSecond());
        provider.tokens(expired, "refresh-1");
        assertThat(cli("login", "--issuer", provider.issuer()).code()).isZero();
        provider.reset().error("invalid_grant");

        GpucloudCliTest.Result jobs = cli("jobs");

        assertThat(jobs.err()).contains("warning: the stored token of profile default has expired and refreshing it"
                + " failed (the token endpoint " + provider.issuer() + "/token refused the refresh token (HTTP 400,"
                + " error 'invalid_grant': as the test says)); log in again: gpucloud login --issuer "
                + provider.issuer());
        assertThat(authorizations).containsExactly("Bearer " + expired);

        // an expired token without a refresh token (--token, --dev, a profile from before) goes out as it is
        authorizations.clear();
        provider.reset();
        cli("login", "--token", expired);
        assertThat(cli("jobs").err()).isEmpty();
        assertThat(provider.tokenRequests).isEmpty();
        assertThat(authorizations).containsExactly("Bearer " + expired);
    }

    @Test
    void a_denied_or_impossible_login_exits_non_zero_and_stores_nothing() throws Exception {
        provider.pending().error("access_denied");
        GpucloudCliTest.Result denied = cli("login", "--issuer", provider.issuer());
        assertThat(denied.code()).isEqualTo(1);
        assertThat(denied.err()).contains("to log in, open ")
                .endsWith("error: the login was denied at the provider (access_denied)\n");

        provider.discovery = "{\"issuer\":\"" + provider.issuer() + "\",\"jwks_uri\":\"" + provider.issuer() + "/jwks\"}";
        GpucloudCliTest.Result noDevice = cli("login", "--issuer", provider.issuer());
        assertThat(noDevice.code()).isEqualTo(1);
        assertThat(noDevice.err()).startsWith("error: the OIDC provider's discovery document " + provider.issuer()
                + "/.well-known/openid-configuration names no device_authorization_endpoint and no token_endpoint");
        assertThat(dir.resolve("home/profiles/default.token")).doesNotExist();
    }

    @Test
    void the_three_ways_to_log_in_exclude_each_other() {
        assertThat(error("login", "--dev", "--token", "a.b.c")).contains("--dev and --token exclude each other");
        assertThat(error("login", "--token", "a.b.c", "--issuer", "http://localhost:1"))
                .contains("--token stores the token as given; --issuer, --client-id and --scope are for the device");
        assertThat(error("login", "--token", "a.b.c", "--scope", "openid")).contains("--token stores the token");
        assertThat(error("login", "--dev", "--role", "operator", "--client-id", "x"))
                .contains("--client-id: only for the device flow against your provider (login --issuer URL), not"
                        + " with --dev");
        assertThat(error("login", "--issuer", provider.issuer(), "--tenant", "acme", "--role", "member"))
                .contains("--tenant, --role: only with --dev (the local issuer); a provider's token names its own");
        assertThat(error("login", "--issuer", "ftp://sso.example.test/realms/x"))
                .contains("--issuer must be the provider's http(s) issuer URL (Keycloak: https://HOST/realms/REALM),"
                        + " was 'ftp://sso.example.test/realms/x'; or log in with --dev (the local issuer) or --token"
                        + " JWT");
        assertThat(provider.deviceRequests).isEmpty();
    }

    @Test
    void an_https_provider_is_trusted_through_the_ca_file_besides_the_jvm_s_authorities() throws Exception {
        Path keystore = dir.resolve("provider.p12");
        Path pem = dir.resolve("provider-ca.pem");
        Keytool.run("-genkeypair", "-alias", "provider", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-keystore",
                keystore.toString(), "-storetype", "PKCS12", "-storepass", "changeit", "-keypass", "changeit");
        Keytool.run("-exportcert", "-rfc", "-alias", "provider", "-keystore", keystore.toString(), "-storepass",
                "changeit", "-file", pem.toString());
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            store.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, "changeit".toCharArray());
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(keys.getKeyManagers(), null, null);

        try (FakeProvider https = new FakeProvider(tls)) {
            https.tokens(FakeProvider.jwt("bob", "globex", Instant.now().plusSeconds(600).getEpochSecond()), null);
            assertThat(https.issuer()).startsWith("https://localhost:");

            GpucloudCliTest.Result untrusted = cli("login", "--issuer", https.issuer());
            assertThat(untrusted.code()).isEqualTo(1);
            assertThat(untrusted.err()).startsWith("error: cannot reach the OIDC provider's discovery document "
                    + https.issuer() + "/.well-known/openid-configuration (SSLHandshakeException: PKIX path building"
                    + " failed").contains("; --ca-file (env GPUCLOUD_CA_FILE) names a certificate authority to trust"
                    + " besides the JVM's");

            GpucloudCliTest.Result trusted = cli("--ca-file", pem.toString(), "login", "--issuer", https.issuer());
            assertThat(trusted.code()).as(trusted.err()).isZero();
            assertThat(trusted.out()).startsWith("logged in as 'bob' (member of globex)");
            assertThat(dir.resolve("home/profiles/default.refresh.json")).doesNotExist();

            assertThat(error("--ca-file", keystore.toString(), "login", "--issuer", https.issuer()))
                    .contains("--ca-file: cannot read a PEM certificate from " + keystore);
        }
    }

    /** What a command refused before it did anything (exit 2). */
    private String error(String... args) {
        GpucloudCliTest.Result result = cli(args);
        assertThat(result.code()).as(result.err()).isEqualTo(2);
        return result.err();
    }

    private GpucloudCliTest.Result cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--scheduler", "localhost:" + scheduler.port()));
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new GpucloudCliTest.Result(code, out.toString(), err.toString());
    }
}
