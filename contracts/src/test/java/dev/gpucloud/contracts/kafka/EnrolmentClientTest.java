package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's side of enrolment on Kubernetes against a real HTTP server on loopback: the scheduler's answers as
 * its endpoint gives them (a credential, a refusal, a 503, nothing at all).
 */
class EnrolmentClientTest {

    private static final byte[] KEY = Base64.getDecoder().decode("q7Yc8b1n5m0Jd4u2Xo9WfQ3pLk6sTzRvHgEaNiCyUjM=");
    private static final String TOKEN = "eyJhbGciOiJSUzI1NiJ9.service-account.token";
    private static final Enrolment.Credential NODE_7 = Enrolment.Credential.mint(KEY, "gpu-node-7",
            List.of("gpu-node-7"));

    @TempDir
    Path dir;
    private Path tokenFile;
    private HttpServer server;
    /** The Authorization header of every request the server saw. */
    private final List<String> seen = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void token() throws IOException {
        tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, TOKEN + "\n");
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void the_credential_the_scheduler_answers_is_written_owner_only_and_signs_for_its_node() throws IOException {
        int port = serve(0, ex -> answer(ex, 200, NODE_7.fileText()));
        Path file = dir.resolve("enrolment/credential");

        Enrolment.Credential got = client(port, Duration.ofSeconds(5)).enrol(file);

        assertThat(got.agentId()).isEqualTo("gpu-node-7");
        assertThat(got.hosts()).containsExactly("gpu-node-7");
        assertThat(Enrolment.Credential.read(file).fileText()).isEqualTo(NODE_7.fileText());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(seen).containsExactly("Bearer " + TOKEN);
    }

    @Test
    void a_kafka_login_in_the_answer_is_written_owner_only_beside_the_credential_and_never_printed()
            throws IOException {
        KafkaLogin login = new KafkaLogin("agent-gpu-node-7", KafkaAccess.randomPassword());
        int port = serve(0, ex -> answer(ex, 200, NODE_7.fileText() + login.fileText()));
        Path credential = dir.resolve("enrolment/credential");
        Path loginFile = KafkaLogin.besideCredential(credential);

        EnrolmentClient.Answer got = client(port, Duration.ofSeconds(5)).enrol(credential, loginFile);

        assertThat(got.login()).isEqualTo(login);
        assertThat(loginFile).hasFileName("credential.kafka");
        assertThat(KafkaLogin.read(loginFile)).isEqualTo(login);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(loginFile))).isEqualTo("rw-------");
        assertThat(Enrolment.Credential.read(credential).fileText()).as("the credential file keeps its three lines")
                .isEqualTo(NODE_7.fileText());
        assertThat(got.login().toString()).doesNotContain(login.password());
    }

    @Test
    void an_answer_without_a_login_gives_none_and_a_half_login_is_refused() throws IOException {
        int plain = serve(0, ex -> answer(ex, 200, NODE_7.fileText()));
        Path credential = dir.resolve("credential");

        assertThat(client(plain, Duration.ofSeconds(5)).enrol(credential, KafkaLogin.besideCredential(credential))
                .login()).isNull();
        assertThat(KafkaLogin.besideCredential(credential)).doesNotExist();
        server.stop(0);

        int half = serve(0, ex -> answer(ex, 200, NODE_7.fileText() + "kafka.user=agent-gpu-node-7\n"));
        assertThatThrownBy(() -> client(half, Duration.ofSeconds(5)).enrol(dir.resolve("other"), dir.resolve("o.kafka")))
                .isInstanceOf(EnrolmentClient.Refused.class).hasMessageContaining("needs both kafka.user= and");
    }

    @Test
    void while_the_scheduler_is_down_the_agent_tries_again_until_it_answers() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort(); // nothing listens here until the server below starts
        }
        Path file = dir.resolve("credential");
        EnrolmentClient client = client(port, Duration.ofSeconds(30));
        CompletableFuture<Enrolment.Credential> enrolled = CompletableFuture.supplyAsync(() -> {
            try {
                return client.enrol(file);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        Thread.sleep(800);
        assertThat(enrolled).isNotDone();
        assertThat(file).doesNotExist();

        serve(port, ex -> answer(ex, 200, NODE_7.fileText()));

        assertThat(enrolled.get(20, TimeUnit.SECONDS).agentId()).isEqualTo("gpu-node-7");
        assertThat(file).exists();
    }

    @Test
    void a_scheduler_that_answers_503_is_asked_again() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        int port = serve(0, ex -> {
            if (calls.incrementAndGet() <= 2) {
                answer(ex, 503, "{\"status\":503,\"error\":\"the issuer's keys could not be read\"}");
            } else {
                answer(ex, 200, NODE_7.fileText());
            }
        });

        assertThat(client(port, Duration.ofSeconds(20)).enrol(dir.resolve("credential")).hosts())
                .containsExactly("gpu-node-7");
        assertThat(calls).hasValue(3);
    }

    @Test
    void a_refusal_is_final_names_the_schedulers_reason_and_writes_nothing() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        int port = serve(0, ex -> {
            calls.incrementAndGet();
            answer(ex, 403, "{\"status\":403,\"error\":\"the token is for system:serviceaccount:x:y\"}");
        });
        Path file = dir.resolve("credential");

        assertThatThrownBy(() -> client(port, Duration.ofSeconds(20)).enrol(file))
                .isInstanceOf(EnrolmentClient.Refused.class)
                .hasMessageContaining("refused to enrol this agent (403)")
                .hasMessageContaining("system:serviceaccount:x:y");
        assertThat(calls).hasValue(1);
        assertThat(file).doesNotExist();
    }

    @Test
    void an_answer_that_is_not_a_credential_is_refused() throws IOException {
        int port = serve(0, ex -> answer(ex, 200, "<html>a proxy's page</html>"));

        assertThatThrownBy(() -> client(port, Duration.ofSeconds(5)).enrol(dir.resolve("credential")))
                .isInstanceOf(EnrolmentClient.Refused.class)
                .hasMessageContaining("not a credential");
    }

    @Test
    void when_the_scheduler_never_answers_the_start_fails_after_the_patience() throws IOException {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }

        assertThatThrownBy(() -> client(port, Duration.ofMillis(700)).enrol(dir.resolve("credential")))
                .isInstanceOf(IOException.class)
                .isNotInstanceOf(EnrolmentClient.Refused.class)
                .hasMessageContaining("no enrolment credential from http://127.0.0.1:" + port + "/enrolment after");
    }

    private EnrolmentClient client(int port, Duration patience) throws IOException {
        return new EnrolmentClient(URI.create("http://127.0.0.1:" + port + "/enrolment"), tokenFile, null, patience,
                Duration.ofMillis(100));
    }

    private interface Handler {
        void handle(HttpExchange exchange) throws IOException;
    }

    private int serve(int port, Handler handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        server.createContext("/enrolment", ex -> {
            seen.add(ex.getRequestHeaders().getFirst("Authorization"));
            if (!ex.getRequestMethod().equals("POST")) {
                answer(ex, 405, "");
                return;
            }
            handler.handle(ex);
        });
        server.start();
        return server.getAddress().getPort();
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (var out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
