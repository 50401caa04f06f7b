package dev.gpucloud.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.MigReading;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JNA binding against a fake libnvidia-ml built from src/test/c/fake_nvml.c: by default 3 GPUs,
 * GPU 0 and 1 joined by NVLink, GPU 1 in MIG mode with a 3g.40gb (at slice 4) and a 1g.10gb (at
 * slice 0) instance, GPU 2 alone.
 */
class NvmlBackendTest {

    static final Instant NOW = Instant.parse("2026-01-05T10:00:00Z");
    static final HostFacts HOST = new HostFacts("gpu-host-1", "gpu-host-1.local", "p5.48xlarge", "us-east-1a",
            CapacityType.SPOT, 98_320_000, 192_000, 2_048_000, "efa-1", List.of("spine-1", "leaf-3"));

    @TempDir
    Path dir;

    private NvmlBackend backend;

    @AfterEach
    void close() {
        if (backend != null) {
            backend.close();
        }
    }

    NvmlBackend open(Path libraryFolder) throws NvmlUnavailableException {
        backend = new NvmlBackend(Nvml.open(Optional.of(libraryFolder)), HOST, Clock.fixed(NOW, ZoneOffset.UTC));
        return backend;
    }

    static GpuReading reading(TelemetrySample sample, int index) {
        return sample.gpus().stream().filter(g -> g.index() == index).findFirst().orElseThrow();
    }

    @Test
    void inventoryDescribesTheHostTheGpusTheirMigLayoutAndNvlinkIslands() throws Exception {
        HostInventory host = open(FakeNvml.install(dir)).inventory().get(0);

        assertThat(host.nodeId()).isEqualTo("gpu-host-1");
        assertThat(host.backend()).isEqualTo("nvml");
        assertThat(host.instanceType()).isEqualTo("p5.48xlarge");
        assertThat(host.capacityType()).isEqualTo(CapacityType.SPOT);
        assertThat(host.switchPath()).containsExactly("spine-1", "leaf-3");
        assertThat(host.observedAt()).isEqualTo(NOW);
        assertThat(host.gpus()).extracting(GpuDevice::index, GpuDevice::uuid, GpuDevice::model, GpuDevice::memoryMib,
                        GpuDevice::pciBusId, GpuDevice::nvlinkIsland, GpuDevice::migEnabled)
                .containsExactly(
                        tuple(0, "GPU-00000000-1111-2222-3333-444444444444", "NVIDIA H100 80GB HBM3", 81559L,
                                "00000000:18:00.0", 0, false),
                        tuple(1, "GPU-00000001-1111-2222-3333-444444444444", "NVIDIA H100 80GB HBM3", 81559L,
                                "00000000:2A:00.0", 0, true),
                        tuple(2, "GPU-00000002-1111-2222-3333-444444444444", "NVIDIA A10G", 23028L,
                                "00000000:3A:00.0", -1, false));
        assertThat(host.gpus().get(1).migInstances()).containsExactly(
                new MigInstance(2, "3g.40gb", "MIG-00000001-0000-2222-3333-444444444444", 40192, 4),
                new MigInstance(9, "1g.10gb", "MIG-00000001-0001-2222-3333-444444444444", 9984, 0));
        assertThat(host.gpus().get(0).migInstances()).isEmpty();
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void aSampleCarriesEveryReadingInTheContractsUnits() throws Exception {
        TelemetrySample sample = open(FakeNvml.install(dir)).sample().get(0);

        assertThat(sample.nodeId()).isEqualTo("gpu-host-1");
        assertThat(sample.sampledAt()).isEqualTo(NOW);
        GpuReading gpu0 = reading(sample, 0);
        assertThat(gpu0.gpuUtilPercent()).isEqualTo(40.0);
        assertThat(gpu0.memCopyUtilPercent()).isEqualTo(20.0);
        assertThat(gpu0.memoryUsedMib()).isEqualTo(1000);
        assertThat(gpu0.memoryFreeMib()).isEqualTo(81559 - 512 - 1000);
        assertThat(gpu0.powerWatts()).isEqualTo(250.5);
        assertThat(gpu0.energyMillijoules()).isEqualTo(123_456_789L);
        assertThat(gpu0.temperatureC()).as("from nvmlDeviceGetTemperatureV").isEqualTo(60);
        assertThat(gpu0.smClockMhz()).isEqualTo(1980);
        assertThat(gpu0.memClockMhz()).isEqualTo(2619);
        assertThat(gpu0.eccCorrected()).isEqualTo(7L);
        assertThat(gpu0.eccUncorrected()).isEqualTo(1L);
        assertThat(gpu0.pciBusId()).isEqualTo("00000000:18:00.0");
        assertThat(gpu0.lastXid()).as("XID events are not read yet").isNull();
        assertThat(gpu0.migInstances()).isEmpty();
        assertThat(sample.gpus()).extracting(GpuReading::index).containsExactly(0, 1, 2);
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void aMigGpuReportsEachInstanceAndNoWholeGpuUtilization() throws Exception {
        GpuReading gpu1 = reading(open(FakeNvml.install(dir)).sample().get(0), 1);

        assertThat(gpu1.gpuUtilPercent()).as("NVML answers NOT_SUPPORTED in MIG mode").isEqualTo(0.0);
        assertThat(gpu1.memCopyUtilPercent()).isNull();
        assertThat(gpu1.migInstances()).extracting(MigReading::gpuInstanceId, MigReading::profile,
                        MigReading::memoryUsedMib, MigReading::grEngineActive)
                .containsExactly(tuple(2, "3g.40gb", 1000L, null), tuple(9, "1g.10gb", 10L, null));
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void eachMigInstanceReportsItsGraphicsEngineActivityBetweenTwoGpmSamples() throws Exception {
        open(FakeNvml.install(dir));

        backend.sample();
        GpuReading gpu1 = reading(backend.sample().get(0), 1);

        assertThat(gpu1.migInstances()).extracting(MigReading::gpuInstanceId, MigReading::grEngineActive)
                .as("the fake reads 5 + 10 x the GPU instance id percent").containsExactly(tuple(2, 0.25), tuple(9, 0.95));
        assertThat(backend.notices()).isEmpty();
        assertThat(backend.faults()).isEmpty();
        assertThat(FakeGpm.liveSamples(dir)).as("one sample kept per instance, the older one freed").isEqualTo(2);
        backend.close();
        assertThat(FakeGpm.liveSamples(dir)).as("closing frees the rest").isZero();
        backend = null;
    }

    @Test
    void withoutGpmTheEngineActivityStaysNullAndThatIsSaidOncePerGpu() throws Exception {
        open(FakeNvml.install(dir, "gpm=0"));

        for (int i = 0; i < 3; i++) {
            assertThat(reading(backend.sample().get(0), 1).migInstances())
                    .allSatisfy(m -> assertThat(m.grEngineActive()).isNull());
        }

        assertThat(backend.notices()).singleElement().asString()
                .contains("GPU 1", "grEngineActive stays null", "does not support GPM");
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void aDriverWithoutGpmSymbolsOrThatRefusesMigSamplesLeavesItNull() throws Exception {
        open(FakeNvml.install(dir, "unsupported=nvmlGpmMigSampleGet"));

        backend.sample();
        backend.sample();

        assertThat(reading(backend.sample().get(0), 1).migInstances()).allSatisfy(m -> assertThat(m.grEngineActive()).isNull());
        assertThat(backend.notices()).singleElement().asString().contains("GPU 1", "NVML_ERROR_NOT_SUPPORTED");
        assertThat(FakeGpm.liveSamples(dir)).isZero();
    }

    @Test
    void placementIsNullWhereNvmlWillNotSayIt() throws Exception {
        open(FakeNvml.install(dir, "unsupported=nvmlGpuInstanceGetInfo"));

        assertThat(backend.inventory().get(0).gpus().get(1).migInstances())
                .allSatisfy(m -> assertThat(m.placementStart()).isNull());
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void aLostGpuIsLeftOutAndRecordedAsAFaultWhileTheOthersAreRead() throws Exception {
        open(FakeNvml.install(dir, "lost=1"));

        HostInventory host = backend.inventory().get(0);
        TelemetrySample sample = backend.sample().get(0);

        assertThat(host.gpus()).extracting(GpuDevice::index).containsExactly(0, 2);
        assertThat(sample.gpus()).extracting(GpuReading::index).containsExactly(0, 2);
        assertThat(backend.faults()).extracting(GpuFault::gpuIndex).containsOnly(1);
        assertThat(backend.faults()).first().satisfies(fault -> {
            assertThat(fault.at()).isEqualTo(NOW);
            assertThat(fault.message()).contains("NVML_ERROR_GPU_IS_LOST (15)").contains("GPU is lost");
        });
    }

    @Test
    void readingsTheDeviceDoesNotSupportAreNullAndNoFault() throws Exception {
        open(FakeNvml.install(dir, "unsupported=nvmlDeviceGetPowerUsage", "unsupported=nvmlDeviceGetClockInfo",
                "unsupported=nvmlDeviceGetTotalEccErrors", "unsupported=nvmlDeviceGetTemperatureV",
                "unsupported=nvmlDeviceGetTemperature", "unsupported=nvmlDeviceGetNvLinkState"));

        GpuReading gpu0 = reading(backend.sample().get(0), 0);

        assertThat(gpu0.powerWatts()).isNull();
        assertThat(gpu0.smClockMhz()).isNull();
        assertThat(gpu0.memClockMhz()).isNull();
        assertThat(gpu0.eccCorrected()).isNull();
        assertThat(gpu0.eccUncorrected()).isNull();
        assertThat(gpu0.temperatureC()).isNull();
        assertThat(gpu0.energyMillijoules()).isEqualTo(123_456_789L);
        assertThat(backend.inventory().get(0).gpus()).extracting(GpuDevice::nvlinkIsland).containsOnly(-1);
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void anOlderDriverWithoutTheOptionalSymbolsFallsBackOrReadsNull() throws Exception {
        GpuReading gpu0 = reading(open(FakeNvml.installLegacy(dir)).sample().get(0), 0);

        assertThat(gpu0.temperatureC()).as("from nvmlDeviceGetTemperature").isEqualTo(50);
        assertThat(gpu0.energyMillijoules()).as("no nvmlDeviceGetTotalEnergyConsumption").isNull();
        assertThat(gpu0.powerWatts()).isEqualTo(250.5);
        assertThat(backend.faults()).isEmpty();
    }

    @Test
    void garbageUnterminatedStringsAreCutAtTheBufferAndMadePrintable() throws Exception {
        open(FakeNvml.install(dir, "garbage=0"));

        GpuDevice gpu0 = backend.inventory().get(0).gpus().get(0);

        assertThat(gpu0.model()).startsWith("GPU").hasSizeLessThanOrEqualTo(NvmlLayout.DEVICE_NAME_BUFFER);
        assertThat(gpu0.model().chars()).allMatch(c -> c >= 0x20 && c < 0x7f);
        assertThat(gpu0.uuid()).startsWith("GPU").hasSizeLessThanOrEqualTo(NvmlLayout.DEVICE_UUID_BUFFER);
        assertThat(gpu0.uuid().chars()).allMatch(c -> c >= 0x20 && c < 0x7f);
        assertThat(backend.sample().get(0).gpus()).hasSize(3);
    }

    @Test
    void aFailedInitSaysWhichCodeAndWhatNvmlCallsIt() throws Exception {
        Path lib = FakeNvml.install(dir, "init=9");

        assertThatThrownBy(() -> Nvml.open(Optional.of(lib)))
                .isInstanceOf(NvmlUnavailableException.class)
                .hasMessageContaining("nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded");
    }

    @Test
    void aMissingLibrarySaysWhereItLooked() {
        assertThatThrownBy(() -> Nvml.open(Optional.of(dir)))
                .isInstanceOf(NvmlUnavailableException.class)
                .hasMessageContaining("cannot load libnvidia-ml")
                .hasMessageContaining(dir.resolve("libnvidia-ml.so.1").toString())
                .hasMessageContaining(dir.resolve("libnvidia-ml.so").toString());
    }

    @Test
    void theLibraryFileItselfMayBeConfigured() throws Exception {
        Path lib = FakeNvml.install(dir).resolve("libnvidia-ml.so.1");

        try (Nvml nvml = Nvml.open(Optional.of(lib))) {
            assertThat(nvml.driverVersion()).isEqualTo("550.54.15");
            assertThat(nvml.deviceCount()).isEqualTo(3);
            assertThat(nvml.loadedFrom()).isEqualTo(lib.toAbsolutePath().toString());
        }
    }

    @Test
    void aCallAfterShutdownIsAnErrorNotACrash() throws IOException, NvmlUnavailableException {
        Nvml nvml = Nvml.open(Optional.of(FakeNvml.install(dir)));
        nvml.close();
        nvml.close();

        assertThatThrownBy(nvml::deviceCount).isInstanceOf(NvmlException.class)
                .hasMessage("nvmlDeviceGetCount_v2 failed: NVML_ERROR_UNINITIALIZED (1): Uninitialized");
        backend = new NvmlBackend(nvml, HOST, Clock.fixed(NOW, ZoneOffset.UTC));
        assertThat(backend.sample().get(0).gpus()).isEmpty();
        assertThat(backend.faults()).extracting(GpuFault::gpuIndex).containsExactly(-1);
    }

    @Test
    void migProfilesComeFromTheMigDeviceName() {
        assertThat(NvmlBackend.profile("NVIDIA A100-SXM4-40GB MIG 1g.5gb")).isEqualTo("1g.5gb");
        assertThat(NvmlBackend.profile("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me")).isEqualTo("1g.10gb+me");
        assertThat(NvmlBackend.profile("odd name")).isEqualTo("odd name");
    }

    @Test
    void xidCriticalErrorsComeFromTheEventSetOnceEachAndShowInTheNextSample() throws Exception {
        NvmlBackend nvml = open(FakeNvml.install(dir, "xid=0:79", "xid=2:48"));
        assertThat(nvml.pollXids()).extracting(NvmlBackend.XidEvent::gpuIndex, NvmlBackend.XidEvent::xid)
                .containsExactly(tuple(0, 79L), tuple(2, 48L));
        assertThat(nvml.pollXids()).isEmpty();
        TelemetrySample sample = nvml.sample().get(0);
        assertThat(reading(sample, 0).lastXid()).isEqualTo(79);
        assertThat(reading(sample, 2).lastXid()).isEqualTo(48);
        assertThat(reading(sample, 1).lastXid()).isNull();
    }

    @Test
    void aDriverWithoutEventSetsIsAFaultOnceNotACrash() throws Exception {
        NvmlBackend nvml = open(FakeNvml.install(dir, "unsupported=nvmlEventSetCreate", "xid=0:79"));
        assertThat(nvml.pollXids()).isEmpty();
        assertThat(nvml.pollXids()).isEmpty();
        assertThat(nvml.faults()).anyMatch(f -> f.message().contains("nvmlEventSetCreate"));
    }
}
