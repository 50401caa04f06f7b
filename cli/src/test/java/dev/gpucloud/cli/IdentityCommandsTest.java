package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.identity.DevIssuer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** login, whoami and the token on every call, against a real gRPC server that records what it was sent. */
class IdentityCommandsTest {

    @TempDir
    Path dir;
    RecordingScheduler server;
    List<String> authorizations;

    @BeforeEach
    void start() throws Exception {
        System.setProperty("gpucloud.home", dir.resolve("home").toString());
        server = new RecordingScheduler();
        authorizations = server.authorizations;
    }

    @AfterEach
    void stop() throws InterruptedException {
        System.clearProperty("gpucloud.home");
        server.close();
    }

    @Test
    void the_development_issuer_serves_tls_1_3_only_with_the_given_certificate() throws Exception {
        Path keystore = dir.resolve("issuer.p12");
        Path password = dir.resolve("issuer.pass");
        Files.writeString(password, "changeit\n");
        Keytool.run("-genkeypair", "-alias", "issuer", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-keystore",
                keystore.toString(), "-storetype", "PKCS12", "-storepass", "changeit");
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        String[] args = {"issuer", "--port", String.valueOf(port), "--key-file", dir.resolve("issuer.jwk").toString(),
            "--tls-keystore", keystore.toString(), "--tls-password-file", password.toString()};
        Thread issuer = new Thread(() -> GpucloudCli.run(args, new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter())), "issuer-under-test");
        issuer.setDaemon(true); // it serves until the JVM ends, as the process does until killed
        issuer.start();

        KeyStore trusted = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(keystore)) {
            trusted.load(in, "changeit".toCharArray());
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(
                TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        URI discovery = URI.create("https://localhost:" + port + "/.well-known/openid-configuration");
        String body = null;
        for (int i = 0; i < 100 && body == null; i++) {
            try {
                body = client(trust, "TLSv1.3").send(HttpRequest.newBuilder(discovery).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
            } catch (ConnectException e) {
                Thread.sleep(100);
            }
        }
        assertThat(body).contains("\"issuer\":\"https://localhost:" + port + "\"")
                .contains("\"jwks_uri\":\"https://localhost:" + port + "/");
        HttpClient old = client(trust, "TLSv1.2");
        assertThatThrownBy(() -> old.send(
                HttpRequest.newBuilder(discovery).build(), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(SSLHandshakeException.class);

        GpucloudCliTest.Result half = cli("issuer", "--key-file", dir.resolve("issuer.jwk").toString(), "--tls-keystore",
                keystore.toString());
        assertThat(half.code()).isEqualTo(2);
        assertThat(half.err()).contains("--tls-keystore and --tls-password-file go together");
    }

    private static HttpClient client(TrustManagerFactory trust, String protocol)
            throws Exception {
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, trust.getTrustManagers(), null);
        SSLParameters params = tls.getDefaultSSLParameters();
        params.setProtocols(new String[] {protocol});
        return HttpClient.newBuilder().sslContext(tls).sslParameters(params).build();
    }

    @Test
    void a_dev_login_stores_a_private_token_that_whoami_reads_and_every_call_sends() throws Exception {
        Path key = dir.resolve("auth/issuer.jwk");
        DevIssuer.loadOrCreate(key, "http://localhost:1"); // as the issuer that up starts creates it
        GpucloudCliTest.Result login = cli("--profile", "acme", "login", "--dev", "--user", "alice", "--tenant", "acme",
                "--role", "member", "--issuer-key", key.toString(), "--issuer", "http://localhost:1");
        assertThat(login.code()).as(login.err()).isZero();
        assertThat(login.out()).startsWith("logged in as 'alice' (member of acme), until ");
        Path file = dir.resolve("home/profiles/acme.token");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");

        assertThat(cli("--profile", "acme", "whoami").out()).startsWith("'alice' (member of acme)");
        assertThat(cli("--profile", "acme", "jobs").code()).isZero();
        assertThat(authorizations).containsExactly("Bearer " + Files.readString(file).strip());

        // another profile, no token: the call goes out without one (the scheduler then says how to log in)
        authorizations.clear();
        cli("--profile", "nobody", "jobs");
        assertThat(authorizations).containsExactly("null");
        assertThat(cli("--profile", "nobody", "whoami").err()).startsWith("not logged in (profile nobody)");
    }

    @Test
    void a_token_from_elsewhere_is_stored_as_given() {
        assertThat(cli("login", "--token", "aaa.bbb.ccc").code()).isZero();
        cli("jobs");
        assertThat(authorizations).containsExactly("Bearer aaa.bbb.ccc");
    }

    @Test
    void a_login_that_cannot_be_done_says_why() {
        // without --dev or --token, login runs the device flow against --issuer, which must be an http(s) URL
        assertThat(cli("login", "--issuer", "localhost:8086").err()).contains("--issuer must be the provider's"
                + " http(s) issuer URL").contains("or log in with --dev (the local issuer) or --token JWT");
        assertThat(cli("login", "--role", "member").err()).contains("--role: only with --dev");
        assertThat(cli("login", "--dev", "--tenant", "acme").err()).contains("--dev needs --role");
        assertThat(cli("login", "--dev", "--role", "root").err()).contains("--role must be one of member,"
                + " tenant-admin, finance, operator, was 'root'");
        assertThat(cli("login", "--dev", "--role", "member").err()).contains("need --tenant");
        assertThat(cli("login", "--dev", "--role", "operator", "--issuer-key", dir.resolve("missing.jwk").toString())
                .err()).contains("cannot read the issuer key");
        assertThat(cli("--profile", "../etc", "whoami").err()).contains("--profile must be");
    }

    private GpucloudCliTest.Result cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--scheduler", "localhost:" + server.port()));
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new GpucloudCliTest.Result(code, out.toString(), err.toString());
    }
}
