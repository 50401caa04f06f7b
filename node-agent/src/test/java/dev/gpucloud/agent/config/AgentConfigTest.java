package dev.gpucloud.agent.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityType;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** gpucloud.agent.* as written in docs/node-agent.md reads as the agent expects. */
class AgentConfigTest {

    static AgentConfig read(Map<String, String> properties) {
        SmallRyeConfig config = new SmallRyeConfigBuilder().withMapping(AgentConfig.class)
                .withConverter(Duration.class, 100, new DurationConverter())
                .withSources(new PropertiesConfigSource(properties, "test", 500)).build();
        return config.getConfigMapping(AgentConfig.class);
    }

    @ParameterizedTest(name = "{0} selects {1}")
    @CsvSource({"auto, AUTO", "nvml, NVML", "nvidia-smi, NVIDIA_SMI", "simulated, SIMULATED"})
    void backendsAreNamedAsInTheDocs(String value, AgentConfig.Backend backend) {
        assertThat(read(Map.of("gpucloud.agent.backend", value)).backend()).isEqualTo(backend);
    }

    @Test
    void theDefaultsKeepTheSimulationAndDescribeAnUnknownOnDemandHost() {
        AgentConfig config = read(Map.of());

        assertThat(config.backend()).isEqualTo(AgentConfig.Backend.SIMULATED);
        assertThat(config.nvml().libraryPath()).isEmpty();
        assertThat(config.nvidiaSmi().path()).isEqualTo("nvidia-smi");
        assertThat(config.nvidiaSmi().timeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.host().nodeId()).isEmpty();
        assertThat(config.host().instanceType()).isEqualTo("unknown");
        assertThat(config.host().capacityType()).isEqualTo(CapacityType.ON_DEMAND);
        assertThat(BackendProducer.hostFacts(config.host()).nodeId()).isNotBlank()
                .isEqualTo(BackendProducer.hostFacts(config.host()).hostname());
        assertThat(BackendProducer.hostFacts(config.host()).cpuMillis()).isPositive();
    }
}
