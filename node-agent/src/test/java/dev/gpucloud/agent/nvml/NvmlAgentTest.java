package dev.gpucloud.agent.nvml;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import dev.gpucloud.testsupport.KafkaTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The whole agent with gpucloud.agent.backend=auto on a host whose libnvidia-ml is the fake one. */
@QuarkusTest
@TestProfile(NvmlAgentTest.FakeNvmlHost.class)
class NvmlAgentTest {

    static final String NODE = "nvml-" + Long.toString(new SecureRandom().nextLong(36L * 36 * 36 * 36 * 36 * 36), 36);

    /** The fake library, installed in a folder of its own, and the real broker. */
    public static class FakeNvmlHost implements QuarkusTestProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(KafkaTestResource.class), new TestResourceEntry(FakeLibrary.class));
        }
    }

    /** Installs the fake libnvidia-ml and points the agent at it. */
    public static class FakeLibrary implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            try {
                Path dir = FakeNvml.install(Files.createTempDirectory("fake-nvml-agent"));
                return Map.of("gpucloud.agent.backend", "auto",
                        "gpucloud.agent.nvml.library-path", dir.toString(),
                        "gpucloud.agent.nvidia-smi.path", dir.resolve("no-nvidia-smi").toString(),
                        "gpucloud.agent.id", NODE,
                        "gpucloud.agent.host.node-id", NODE,
                        "gpucloud.agent.host.instance-type", "p5.48xlarge",
                        "gpucloud.agent.host.capacity-type", "spot",
                        "gpucloud.agent.host.switch-path", "spine-1,leaf-3");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
        }
    }

    @Test
    void theAgentDescribesTheRealHostThroughNvml() {
        given().get("/agent/hosts").then().statusCode(200)
                .body("", hasSize(1))
                .body("[0].nodeId", equalTo(NODE))
                .body("[0].backend", equalTo("nvml"))
                .body("[0].instanceType", equalTo("p5.48xlarge"))
                .body("[0].capacityType", equalTo("SPOT"))
                .body("[0].switchPath", contains("spine-1", "leaf-3"))
                .body("[0].gpuCount", equalTo(3))
                .body("[0].gpuModel", equalTo("NVIDIA H100 80GB HBM3,NVIDIA A10G"));
    }
}
