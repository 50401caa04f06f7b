package dev.gpucloud.scheduler.framework;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Builds small fleets for framework tests: {@code host("h1").gpus(8).leaf("f1", "s1", "l1").add(fleet)}. */
public final class TestFleet {

    public static final long NOW = 1_000_000L;

    private TestFleet() {
    }

    public static HostBuilder host(String id) {
        return new HostBuilder(id);
    }

    public static final class HostBuilder {
        private final String id;
        private String model = "A100-SXM4-80GB";
        private int gpus = 8;
        private long memoryMib = 81_920;
        private boolean mig;
        private int islandSize = 8;
        private CapacityType capacity = CapacityType.ON_DEMAND;
        private long price = 32_000_000;
        private int cpu = 96_000;
        private long memory = 1_048_576;
        private String fabric;
        private List<String> path = List.of();
        private List<String> datasets = List.of();
        private String zone = "zone-a";

        HostBuilder(String id) {
            this.id = id;
        }

        public HostBuilder model(String value, long gpuMemoryMib) {
            model = value;
            memoryMib = gpuMemoryMib;
            return this;
        }

        public HostBuilder gpus(int value) {
            gpus = value;
            return this;
        }

        public HostBuilder mig() {
            mig = true;
            return this;
        }

        public HostBuilder islands(int size) {
            islandSize = size;
            return this;
        }

        public HostBuilder spot(long pricePerHour) {
            capacity = CapacityType.SPOT;
            price = pricePerHour;
            return this;
        }

        public HostBuilder price(long pricePerHour) {
            price = pricePerHour;
            return this;
        }

        public HostBuilder cpu(int millis, long memMib) {
            cpu = millis;
            memory = memMib;
            return this;
        }

        public HostBuilder leaf(String fabricName, String spine, String leaf) {
            fabric = fabricName;
            path = List.of(spine, leaf);
            return this;
        }

        public HostBuilder datasets(String... names) {
            datasets = List.of(names);
            return this;
        }

        public HostBuilder zone(String value) {
            zone = value;
            return this;
        }

        public HostInventory inventory() {
            List<GpuDevice> devices = new ArrayList<>();
            for (int i = 0; i < gpus; i++) {
                devices.add(new GpuDevice(i, id + "-gpu" + i, model, memoryMib, null, i / islandSize, mig, List.of()));
            }
            return new HostInventory(id, id, "p4de.24xlarge", zone, capacity, price, cpu, memory, fabric, path, devices,
                    datasets, "simulated", Instant.EPOCH);
        }

        public Fleet add(Fleet fleet) {
            fleet.upsert(inventory(), NOW);
            return fleet;
        }
    }
}
