package dev.gpucloud.agent.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EnrolmentClient;
import dev.gpucloud.contracts.kafka.KafkaAccess;
import dev.gpucloud.contracts.kafka.KafkaLogin;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's enrolment before Quarkus boots, against a real HTTP server answering as the scheduler does: the
 * credential and the login are written owner-only, a restarted container reuses them without asking, and the
 * login reaches the Kafka clients' {@code kafka.sasl.jaas.config} as the agent's own configuration resolves it.
 */
class BootEnrolmentTest {

    private static final Enrolment.Credential NODE_7 = Enrolment.Credential.mint(Enrolment.newKey(), "gpu-node-7",
            List.of("gpu-node-7"));
    private static final KafkaLogin LOGIN = new KafkaLogin("agent-gpu-node-7", KafkaAccess.randomPassword());

    @TempDir
    Path dir;
    private HttpServer server;
    private final AtomicInteger calls = new AtomicInteger();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
        System.clearProperty(BootEnrolment.USER_PROPERTY);
        System.clearProperty(BootEnrolment.PASSWORD_PROPERTY);
        System.clearProperty(BootEnrolment.AGENT_ID_PROPERTY);
    }

    /** A scheduler that answers {@code status} and {@code body} to POST /enrolment. */
    private String scheduler(int status, String body) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        server.createContext("/enrolment", ex -> {
            calls.incrementAndGet();
            byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
            ex.sendResponseHeaders(status, bytes.length);
            ex.getResponseBody().write(bytes);
            ex.close();
        });
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/enrolment";
    }

    private Map<String, String> env(String url) throws IOException {
        Path token = dir.resolve("token");
        Files.writeString(token, "eyJhbGciOiJSUzI1NiJ9.projected.token\n");
        return Map.of(EnrolmentClient.URL_ENV, url, EnrolmentClient.TOKEN_ENV, token.toString(),
                Enrolment.CREDENTIAL_ENV, dir.resolve("enrolment/credential").toString());
    }

    @Test
    void the_first_start_enrols_and_writes_both_files_owner_only_and_a_restart_reuses_them() throws IOException {
        Map<String, String> env = env(scheduler(200, NODE_7.fileText() + LOGIN.fileText()));

        EnrolmentClient.Answer first = BootEnrolment.enrol(env);

        assertThat(first.login()).isEqualTo(LOGIN);
        assertThat(first.credential().agentId()).isEqualTo("gpu-node-7");
        Path credential = dir.resolve("enrolment/credential");
        Path login = dir.resolve("enrolment/credential.kafka");
        for (Path file : List.of(credential, login)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as(file.toString())
                    .isEqualTo("rw-------");
        }
        assertThat(KafkaLogin.read(login)).isEqualTo(LOGIN);
        assertThat(calls).hasValue(1);

        EnrolmentClient.Answer restarted = BootEnrolment.enrol(env);

        assertThat(calls).as("a restarted container does not ask again").hasValue(1);
        assertThat(restarted.login()).isEqualTo(LOGIN);
        assertThat(restarted.credential().fileText()).isEqualTo(NODE_7.fileText());
    }

    @Test
    void the_login_reaches_the_kafka_clients_settings_of_the_agents_configuration() throws IOException {
        BootEnrolment.apply(BootEnrolment.enrol(env(scheduler(200, NODE_7.fileText() + LOGIN.fileText()))));

        URL properties = getClass().getClassLoader().getResource("application.properties");
        SmallRyeConfig config = new SmallRyeConfigBuilder().addDefaultSources().addDefaultInterceptors()
                .withSources(new PropertiesConfigSource(properties, 250)).build();
        assertThat(config.getValue("kafka.sasl.jaas.config", String.class)).isEqualTo(
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"agent-gpu-node-7\" password=\""
                        + LOGIN.password() + "\";");
        assertThat(config.getValue("mp.messaging.incoming.commands-in.group.id", String.class))
                .isEqualTo("node-agent-gpu-node-7");
    }

    @Test
    void without_an_enrolment_url_nothing_happens() throws IOException {
        assertThat(BootEnrolment.enrol(Map.of(Enrolment.CREDENTIAL_ENV, dir.resolve("credential").toString())))
                .isNull();
        assertThat(dir.resolve("credential")).doesNotExist();
        assertThat(System.getProperty(BootEnrolment.PASSWORD_PROPERTY)).isNull();
    }

    @Test
    void a_scheduler_without_logins_leaves_the_configured_login_alone() throws IOException {
        EnrolmentClient.Answer answer = BootEnrolment.enrol(env(scheduler(200, NODE_7.fileText())));
        BootEnrolment.apply(answer);

        assertThat(answer.login()).isNull();
        assertThat(dir.resolve("enrolment/credential.kafka")).doesNotExist();
        assertThat(System.getProperty(BootEnrolment.PASSWORD_PROPERTY)).isNull();
    }

    @Test
    void a_refusal_stops_the_start_and_writes_nothing() throws IOException {
        Map<String, String> env = env(scheduler(403, "{\"message\":\"the token is for 'x'\"}"));

        assertThatThrownBy(() -> BootEnrolment.enrol(env)).isInstanceOf(EnrolmentClient.Refused.class)
                .hasMessageContaining("(403)");
        assertThat(dir.resolve("enrolment/credential")).doesNotExist();
        assertThat(dir.resolve("enrolment/credential.kafka")).doesNotExist();
    }
}
