package dev.gpucloud.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.config.AgentConfig.Backend;
import dev.gpucloud.agent.nvml.NvmlUnavailableException;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * gpucloud.agent.backend: auto takes nvml, else nvidia-smi, else the simulation, and says why it
 * passed one over; a named real backend that cannot open stops the agent with the reason.
 */
class BackendSelectionTest {

    static GpuBackend named(String name) {
        return new GpuBackend() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public List<HostInventory> inventory() {
                return List.of();
            }

            @Override
            public List<TelemetrySample> sample() {
                return List.of();
            }
        };
    }

    static final BackendProducer.Opener NVML = () -> named("nvml");
    static final BackendProducer.Opener SMI = () -> named("nvidia-smi");
    static final BackendProducer.Opener NO_NVML = () -> {
        throw new NvmlUnavailableException("cannot load libnvidia-ml: libnvidia-ml.so.1: not found");
    };
    static final BackendProducer.Opener NO_SMI = () -> {
        throw new NvmlUnavailableException("no executable nvidia-smi on PATH");
    };

    final List<String> log = new ArrayList<>();

    String choose(Backend wanted, BackendProducer.Opener nvml, BackendProducer.Opener smi) {
        return BackendProducer.choose(wanted, nvml, smi, () -> named("simulated"), log::add).name();
    }

    @Test
    void autoPrefersNvml() {
        assertThat(choose(Backend.AUTO, NVML, SMI)).isEqualTo("nvml");
        assertThat(log).isEmpty();
    }

    @Test
    void autoFallsBackToNvidiaSmiAndSaysWhy() {
        assertThat(choose(Backend.AUTO, NO_NVML, SMI)).isEqualTo("nvidia-smi");
        assertThat(log).containsExactly(
                "backend auto: nvml not used: cannot load libnvidia-ml: libnvidia-ml.so.1: not found");
    }

    @Test
    void autoFallsBackToTheSimulationWhenNeitherAnswers() {
        assertThat(choose(Backend.AUTO, NO_NVML, NO_SMI)).isEqualTo("simulated");
        assertThat(log).hasSize(2).last().asString().contains("nvidia-smi not used: no executable nvidia-smi");
    }

    @Test
    void simulatedNeverTouchesTheRealBackends() {
        BackendProducer.Opener untouchable = () -> {
            throw new AssertionError("opened");
        };
        assertThat(choose(Backend.SIMULATED, untouchable, untouchable)).isEqualTo("simulated");
    }

    @Test
    void aNamedRealBackendIsUsedOrStopsTheAgentWithTheReason() {
        assertThat(choose(Backend.NVML, NVML, NO_SMI)).isEqualTo("nvml");
        assertThat(choose(Backend.NVIDIA_SMI, NO_NVML, SMI)).isEqualTo("nvidia-smi");
        assertThatThrownBy(() -> choose(Backend.NVML, NO_NVML, SMI))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("gpucloud.agent.backend=nvml but cannot load libnvidia-ml: libnvidia-ml.so.1: not found");
        assertThatThrownBy(() -> choose(Backend.NVIDIA_SMI, NVML, NO_SMI))
                .hasMessage("gpucloud.agent.backend=nvidia-smi but no executable nvidia-smi on PATH");
    }
}
