package dev.gpucloud.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The nvidia-smi fallback against a fake nvidia-smi: a shell script the test writes. */
class NvidiaSmiBackendTest {

    static final Clock CLOCK = Clock.fixed(NvmlBackendTest.NOW, ZoneOffset.UTC);
    static final String QUERY = "--query-gpu=" + NvidiaSmiCsv.FIELDS;

    @TempDir
    Path dir;

    /** A fake nvidia-smi that checks its arguments, then runs {@code body}. */
    Path fakeSmi(String body) throws IOException {
        Path script = dir.resolve("nvidia-smi");
        Files.writeString(script, "#!/bin/sh\n"
                + "[ \"$1\" = \"" + QUERY + "\" ] && [ \"$2\" = \"--format=csv,noheader,nounits\" ]"
                + " || { echo \"unexpected arguments: $*\" >&2; exit 2; }\n"
                + body + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        return script;
    }

    NvidiaSmiBackend open(Path script, Duration timeout) throws NvmlUnavailableException {
        return NvidiaSmiBackend.open(script.toString(), timeout, NvmlBackendTest.HOST, CLOCK);
    }

    static final String TWO_GPUS = "cat <<'EOF'\n"
            + "0, GPU-aaaa, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559, 1000, 80047, 40, 20, 55, 250.50, 1980, 2619\n"
            + "1, GPU-bbbb, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 81559, 0, 81047, [N/A], [N/A], 31, [Not Supported],"
            + " 1980, 2619\n"
            + "EOF";

    @Test
    void inventoryAndSampleComeFromOneQueryEach() throws Exception {
        NvidiaSmiBackend backend = open(fakeSmi(TWO_GPUS), Duration.ofSeconds(10));

        HostInventory host = backend.inventory().get(0);
        assertThat(host.backend()).isEqualTo("nvidia-smi");
        assertThat(host.nodeId()).isEqualTo("gpu-host-1");
        assertThat(host.gpus()).extracting(GpuDevice::index, GpuDevice::uuid, GpuDevice::memoryMib,
                        GpuDevice::nvlinkIsland, GpuDevice::migEnabled)
                .containsExactly(tuple(0, "GPU-aaaa", 81559L, -1, false), tuple(1, "GPU-bbbb", 81559L, -1, false));

        assertThat(backend.sample().get(0).gpus()).extracting(GpuReading::index, GpuReading::gpuUtilPercent,
                        GpuReading::memCopyUtilPercent, GpuReading::memoryUsedMib, GpuReading::powerWatts,
                        GpuReading::temperatureC, GpuReading::energyMillijoules)
                .containsExactly(tuple(0, 40.0, 20.0, 1000L, 250.5, 55, null),
                        tuple(1, 0.0, null, 0L, null, 31, null));
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void malformedLinesAreFaultsAndTheRestIsStillRead() throws Exception {
        NvidiaSmiBackend backend = open(fakeSmi(TWO_GPUS + "\necho 'garbage line'"), Duration.ofSeconds(10));

        assertThat(backend.sample().get(0).gpus()).hasSize(2);
        assertThat(backend.faults()).extracting(GpuFault::message)
                .contains("nvidia-smi output line 3: expected 13 fields, got 1: garbage line");
    }

    @Test
    void aHungNvidiaSmiIsKilledAtTheTimeoutAndReportedNotThrown() throws Exception {
        Path flag = dir.resolve("hang");
        NvidiaSmiBackend backend = open(fakeSmi("[ -f " + flag + " ] && exec sleep 30\n" + TWO_GPUS),
                Duration.ofMillis(500));
        Files.createFile(flag);

        assertThat(backend.sample().get(0).gpus()).isEmpty();
        assertThat(backend.faults()).extracting(GpuFault::message).singleElement().asString()
                .contains("did not answer within 500 ms");
    }

    @Test
    void aFailingNvidiaSmiIsNotUsed() throws Exception {
        Path script = fakeSmi("echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'"
                + "\nexit 9");

        assertThatThrownBy(() -> open(script, Duration.ofSeconds(10)))
                .isInstanceOf(NvmlUnavailableException.class)
                .hasMessageContaining("exited with 9: NVIDIA-SMI has failed");
    }

    @Test
    void aMissingNvidiaSmiIsNotUsed() {
        assertThatThrownBy(() -> open(dir.resolve("no-such-nvidia-smi"), Duration.ofSeconds(1)))
                .isInstanceOf(NvmlUnavailableException.class)
                .hasMessageContaining("no executable");
        assertThatThrownBy(() -> NvidiaSmiBackend.open("no-such-nvidia-smi-on-path", Duration.ofSeconds(1),
                NvmlBackendTest.HOST, CLOCK))
                .hasMessage("no executable no-such-nvidia-smi-on-path on PATH");
    }
}
