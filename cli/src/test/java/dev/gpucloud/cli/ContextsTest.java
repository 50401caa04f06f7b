package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contexts and where each setting comes from: flag, then environment, then context, then default. Which address a
 * command used is read from a real call: a recording scheduler answers at one address, nothing at the others.
 */
class ContextsTest {

    @TempDir
    Path dir;
    final Map<String, String> env = new HashMap<>();
    RecordingScheduler scheduler;
    String live;

    @BeforeEach
    void start() throws Exception {
        System.setProperty("gpucloud.home", dir.resolve("home").toString());
        scheduler = new RecordingScheduler();
        live = "localhost:" + scheduler.port();
    }

    @AfterEach
    void stop() throws InterruptedException {
        System.clearProperty("gpucloud.home");
        scheduler.close();
    }

    GpucloudCliTest.Result cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = GpucloudCli.run(args, new PrintWriter(out), new PrintWriter(err), env::get);
        return new GpucloudCliTest.Result(code, out.toString(), err.toString());
    }

    static String closed() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return "localhost:" + socket.getLocalPort();
        }
    }

    @Test
    void set_use_get_current_and_delete_a_context_in_a_private_file() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "not read until a call is made\n");
        assertThat(cli("config", "set-context", "prod", "--server", "sched.example.com:443", "--ca-file", ca.toString(),
                "--profile", "acme").out()).startsWith("made context prod: server sched.example.com:443, TLS trusting "
                + ca.toAbsolutePath());
        assertThat(cli("config", "set-context", "local", "--server", "localhost:8081,localhost:8091").code()).isZero();
        GpucloudCliTest.Result none = cli("config", "current-context");
        assertThat(none.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(none, "no current context", "gpucloud config use-context NAME");

        assertThat(cli("config", "use-context", "prod").out()).isEqualTo("switched to context prod\n");
        assertThat(cli("config", "current-context").out()).isEqualTo("prod\n");
        List<String> table = cli("config", "get-contexts").out().lines().toList();
        assertThat(table.get(0)).startsWith("CURRENT").contains("NAME", "SERVER", "CA-FILE", "PROFILE");
        assertThat(table.get(1)).startsWith("-").contains("local", "localhost:8081,localhost:8091");
        assertThat(table.get(2)).startsWith("*").contains("prod", "sched.example.com:443", "acme");
        JsonNode json = new ObjectMapper().readTree(cli("config", "get-contexts", "-o", "json").out());
        assertThat(json.path("currentContext").asText()).isEqualTo("prod");
        assertThat(json.path("contexts").path("prod").path("profile").asText()).isEqualTo("acme");

        Path file = dir.resolve("home").resolve("config.yaml");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");

        assertThat(cli("config", "set-context", "prod", "--ca-file", "").out()).contains("plaintext");
        assertThat(cli("config", "delete-context", "prod").out()).isEqualTo("deleted context prod; no context is"
                + " current\n");
        assertThat(cli("config", "get-contexts", "--no-headers").out().lines().toList()).singleElement().asString()
                .contains("local");
    }

    @Test
    void the_current_context_names_the_server_and_the_profile() throws Exception {
        cli("config", "set-context", "here", "--server", live, "--profile", "acme", "--use");
        GpucloudCliTest.Result r = cli("whoami");
        assertThat(r.err()).contains("profile acme");
        assertThat(cli("jobs").code()).isZero();
        assertThat(scheduler.authorizations).hasSize(1);
    }

    @Test
    void a_flag_beats_the_environment_which_beats_the_context_which_beats_the_default() throws Exception {
        String flag = closed();
        String envServer = closed();
        String contextServer = closed();
        cli("config", "set-context", "c", "--server", contextServer, "--use");
        env.put("GPUCLOUD_SERVER", envServer);
        env.put("GPUCLOUD_LOCAL_SERVER", live);

        assertThat(cli("--server", flag, "jobs").err()).contains("cannot reach the scheduler at " + flag + ":");
        assertThat(cli("jobs").err()).contains("at " + envServer + " (from GPUCLOUD_SERVER)");
        env.remove("GPUCLOUD_SERVER");
        env.put("GPUCLOUD_SCHEDULER", envServer);
        assertThat(cli("jobs").err()).as("the old name still works").contains("at " + envServer
                + " (from GPUCLOUD_SCHEDULER)");
        env.remove("GPUCLOUD_SCHEDULER");
        assertThat(cli("jobs").err()).contains("at " + contextServer + " (from context c)");
        assertThat(cli("--scheduler", flag, "jobs").err()).as("--scheduler is --server").contains("at " + flag + ":");
        cli("config", "delete-context", "c");
        GpucloudCliTest.Result local = cli("jobs");
        assertThat(local.code()).as("the local stack's address, ./gpucloud's default, answers").isZero();
        env.remove("GPUCLOUD_LOCAL_SERVER");
        // not called: another stack may listen on the default port
        Contexts.Target fallback = Contexts.resolve(null, null, null, null, env::get);
        assertThat(fallback.server()).isEqualTo("localhost:8081");
        assertThat(fallback.serverFrom()).isEqualTo("the default");
        assertThat(fallback.profile()).isEqualTo("default");
        assertThat(fallback.caFile()).isNull();
    }

    @Test
    void context_and_environment_pick_a_context_over_the_current_one() throws Exception {
        String other = closed();
        cli("config", "set-context", "live", "--server", live);
        cli("config", "set-context", "dead", "--server", other, "--use");
        assertThat(cli("--context", "live", "jobs").code()).isZero();
        env.put("GPUCLOUD_CONTEXT", "live");
        assertThat(cli("jobs").code()).isZero();
        assertThat(cli("--context", "dead", "jobs").err()).contains("(from context dead)");
        env.remove("GPUCLOUD_CONTEXT");
        env.put("GPUCLOUD_LOCAL_SERVER", live);
        assertThat(cli("--context", "none", "jobs").code()).as("none: no context, the current one neither").isZero();
    }

    @Test
    void a_context_that_names_a_server_does_not_take_the_local_stacks_ca() throws Exception {
        cli("config", "set-context", "remote", "--server", live, "--use");
        env.put("GPUCLOUD_LOCAL_CA_FILE", dir.resolve("missing-ca.pem").toString());
        GpucloudCliTest.Result r = cli("jobs");
        assertThat(r.code()).as(r.err()).isZero();
    }

    @Test
    void bad_contexts_and_names_are_one_line_errors() throws Exception {
        GpucloudCliTest.Result unknown = cli("config", "use-context", "nope");
        assertThat(unknown.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(unknown, "no context 'nope'", "there is none",
                "gpucloud config set-context nope --server HOST:PORT");
        cli("config", "set-context", "a", "--server", live);
        GpucloudCliTest.assertOneLineError(cli("--context", "b", "jobs"), "no context 'b'", "known: a");
        env.put("GPUCLOUD_CONTEXT", "zzz");
        GpucloudCliTest.assertOneLineError(cli("jobs"), "no context 'zzz'");
        env.remove("GPUCLOUD_CONTEXT");
        GpucloudCliTest.assertOneLineError(cli("config", "set-context", "../etc", "--server", live),
                "a context's name must be 1..63 letters");
        GpucloudCliTest.assertOneLineError(cli("config", "set-context", "none", "--server", live),
                "'none' is not a context's name");
        GpucloudCliTest.assertOneLineError(cli("config", "set-context", "fresh"), "context 'fresh' is new: give it"
                + " at least --server");
        GpucloudCliTest.assertOneLineError(cli("config", "set-context", "a", "--server", "a b:1"),
                "--server must be HOST:PORT");
        GpucloudCliTest.assertOneLineError(cli("config", "set-context", "a", "--ca-file", dir.resolve("no.pem")
                .toString()), "--ca-file: no readable file");
        GpucloudCliTest.assertOneLineError(cli("config", "set-context", "a", "--profile", "a/b"), "--profile must be");
        GpucloudCliTest.assertOneLineError(cli("config"), "say what to do: config set-context");
        GpucloudCliTest.assertOneLineError(cli("config", "delete-context", "nope"), "no context 'nope'");
    }

    @Test
    void a_broken_contexts_file_is_named_and_config_can_still_mend_it() throws Exception {
        Path file = dir.resolve("home").resolve("config.yaml");
        Files.createDirectories(file.getParent());
        Files.writeString(file, "current-context: a\ncontexts: {a: {srever: x}}\n");
        GpucloudCliTest.Result r = cli("jobs");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "cannot read the CLI's contexts in " + file, "srever");
        Files.writeString(file, "current-context: gone\n");
        GpucloudCliTest.assertOneLineError(cli("jobs"), "no context 'gone'");
        env.put("GPUCLOUD_CONTEXT", "none");
        assertThat(cli("--server", live, "jobs").code()).as("none does not read the file").isZero();
        env.remove("GPUCLOUD_CONTEXT");
        assertThat(cli("config", "set-context", "gone", "--server", live).code()).isZero();
        assertThat(cli("jobs").code()).isZero();
    }
}
