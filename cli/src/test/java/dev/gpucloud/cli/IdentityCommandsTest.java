package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.identity.DevIssuer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
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
