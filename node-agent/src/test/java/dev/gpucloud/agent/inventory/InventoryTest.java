package dev.gpucloud.agent.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.cloud.InstanceFacts;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** RDMA NICs from a fake sysfs tree, the dataset cache, and the enriched inventory. */
class InventoryTest {

    @TempDir
    Path temp;

    /** Writes a port the way the kernel lays it out under class/infiniband. */
    static void port(Path sysfs, String device, int port, String state, String linkLayer, String rate) throws IOException {
        Path dir = Files.createDirectories(sysfs.resolve("class/infiniband/" + device + "/ports/" + port));
        if (state != null) {
            Files.writeString(dir.resolve("state"), state + "\n");
        }
        if (linkLayer != null) {
            Files.writeString(dir.resolve("link_layer"), linkLayer + "\n");
        }
        if (rate != null) {
            Files.writeString(dir.resolve("rate"), rate + "\n");
        }
    }

    @Test
    void rdmaPortsAreReadFromSysfs() throws IOException {
        Path sysfs = temp.resolve("sys");
        port(sysfs, "mlx5_0", 1, "4: ACTIVE", "InfiniBand", "200 Gb/sec (4X HDR)");
        port(sysfs, "mlx5_1", 1, "1: DOWN", "Ethernet", "100 Gb/sec (2X EDR)");
        port(sysfs, "mlx5_2", 1, null, null, "garbage");
        Files.createDirectories(sysfs.resolve("class/infiniband/mlx5_2/ports/not-a-port"));
        assertThat(RdmaNics.read(sysfs)).containsExactly(
                new RdmaPort("mlx5_0", 1, "ACTIVE", "InfiniBand", 200, "200 Gb/sec (4X HDR)"),
                new RdmaPort("mlx5_1", 1, "DOWN", "Ethernet", 100, "100 Gb/sec (2X EDR)"),
                new RdmaPort("mlx5_2", 1, "unknown", "unknown", 0, "garbage"));
        assertThat(RdmaNics.read(sysfs).get(0).active()).isTrue();
        assertThat(RdmaNics.read(temp.resolve("no-such-sys"))).isEmpty();
    }

    @Test
    void eachSubdirectoryOfTheCacheIsADataset() throws IOException {
        Path cache = temp.resolve("cache");
        for (String name : List.of("imagenet-1k", "c4-en", ".staging", "laion.partial")) {
            Files.createDirectories(cache.resolve(name));
        }
        Files.writeString(cache.resolve("README"), "not a dataset");
        assertThat(DatasetCache.list(cache)).containsExactly("c4-en", "imagenet-1k");
        assertThat(DatasetCache.list(temp.resolve("none"))).isEmpty();
    }

    @Test
    void theInventoryCarriesDatasetsAndTheCloudsFactsWhereConfigurationSaidUnknown() throws IOException {
        Path cache = Files.createDirectories(temp.resolve("cache/wikitext"));
        HostInventory plain = new HostInventory("h1", "h1", "unknown", "unknown", CapacityType.ON_DEMAND, 0, 8000, 1024,
                null, List.of(), List.of(), List.of(), "nvml", Instant.now());
        GpuBackend backend = new GpuBackend() {
            public String name() {
                return "nvml";
            }

            public List<HostInventory> inventory() {
                return List.of(plain);
            }

            public List<TelemetrySample> sample() {
                return List.of();
            }
        };
        HostInventory enriched = new EnrichedBackend(backend, cache.getParent(),
                new InstanceFacts("p4d.24xlarge", "us-east-1a", "spot")).inventory().get(0);
        assertThat(enriched.cachedDatasets()).containsExactly("wikitext");
        assertThat(enriched.instanceType()).isEqualTo("p4d.24xlarge");
        assertThat(enriched.zone()).isEqualTo("us-east-1a");
        assertThat(enriched.capacityType()).isEqualTo(CapacityType.SPOT);
        assertThat(EnrichedBackend.unwrap(new EnrichedBackend(backend, null, null))).isSameAs(backend);
        assertThat(enriched.rdmaNics()).isEmpty();

        Path sysfs = temp.resolve("sys");
        port(sysfs, "mlx5_0", 1, "4: ACTIVE", "InfiniBand", "200 Gb/sec (4X HDR)");
        port(sysfs, "mlx5_1", 1, "1: DOWN", "Ethernet", "100 Gb/sec (2X EDR)");
        EnrichedBackend withNics = new EnrichedBackend(backend, null, null, sysfs);
        HostInventory described = withNics.inventory().get(0);
        assertThat(described.rdmaNics()).containsExactly(new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", 200),
                new RdmaNic("mlx5_1", 1, "DOWN", "Ethernet", 100));
        assertThat(described.hasActiveRdma()).isTrue();
        // read afresh: a port that goes down shows in the next description
        port(sysfs, "mlx5_0", 1, "1: DOWN", "InfiniBand", "200 Gb/sec (4X HDR)");
        assertThat(withNics.inventory().get(0).hasActiveRdma()).isFalse();
    }
}
