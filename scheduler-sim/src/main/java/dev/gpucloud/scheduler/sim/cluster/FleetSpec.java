package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.scheduler.sim.trace.CsvFile;
import dev.gpucloud.scheduler.sim.trace.CsvRow;
import dev.gpucloud.scheduler.sim.trace.ErrorMode;
import dev.gpucloud.scheduler.sim.trace.TraceFormatException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A fleet the simulator can run on, read from a small CSV file with '#' comments (format in
 * docs/traces.md): one row per host type with its count, GPUs, fabric, spot share and prices. Host
 * ids are the type's name and a zero-based number ("p4d.24xlarge-007"); of each type, the last
 * round(count x spot_share) hosts (halves round up) are spot. A malformed row always fails the load.
 */
public record FleetSpec(String name, List<HostType> hostTypes) {

    public static final List<String> COLUMNS = List.of("host_type", "count", "gpu_model", "gpus", "gpu_memory_mib",
            "nvlink", "cpu_milli", "memory_mib", "fabric", "spot_share", "price_per_hour", "spot_price_per_hour");
    /** {@link HostInventory#zone()} of every fleet host. */
    public static final String ZONE = "sim-zone-a";

    public FleetSpec {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a fleet needs a name");
        }
        hostTypes = List.copyOf(hostTypes);
    }

    /** Reads a fleet spec; the fleet is named after the file, without ".csv". */
    public static FleetSpec load(Path path) {
        List<HostType> types = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        CsvFile.read(path, COLUMNS, true, ErrorMode.STRICT, row -> {
            HostType type = parse(row);
            Integer earlier = seen.putIfAbsent(type.name(), row.line());
            if (earlier != null) {
                throw row.error("host_type", "'" + type.name() + "' repeats line " + earlier);
            }
            return type;
        }, types::add);
        String file = CsvFile.label(path);
        if (types.isEmpty()) {
            throw new TraceFormatException(file, 0, null, "the fleet has no host types");
        }
        return new FleetSpec(file.endsWith(".csv") ? file.substring(0, file.length() - 4) : file, types);
    }

    private static HostType parse(CsvRow row) {
        int count = row.intValue("count", 0, 100_000);
        BigDecimal share = row.decimal("spot_share");
        if (share.signum() < 0 || share.compareTo(BigDecimal.ONE) > 0) {
            throw row.error("spot_share", "'" + row.raw("spot_share") + "' is out of range (must be within 0..1)");
        }
        int spotHosts = share.multiply(BigDecimal.valueOf(count)).setScale(0, RoundingMode.HALF_UP).intValueExact();
        long price = row.scaled("price_per_hour", 6, 0, Long.MAX_VALUE);
        long spotPrice = 0;
        if (!row.raw("spot_price_per_hour").isEmpty()) {
            spotPrice = row.scaled("spot_price_per_hour", 6, 0, Long.MAX_VALUE);
        } else if (share.signum() > 0) {
            throw row.error("spot_price_per_hour", "is empty, but spot_share is " + row.raw("spot_share"));
        }
        return new HostType(
                row.text("host_type"),
                count,
                row.text("gpu_model"),
                row.intValue("gpus", 0, 64),
                row.longValue("gpu_memory_mib", 1, Long.MAX_VALUE),
                yesNo(row, "nvlink"),
                row.intValue("cpu_milli", 0, Integer.MAX_VALUE),
                row.longValue("memory_mib", 0, Long.MAX_VALUE),
                row.raw("fabric"),
                spotHosts,
                price,
                spotPrice);
    }

    private static boolean yesNo(CsvRow row, String column) {
        return switch (row.text(column).toLowerCase(Locale.ROOT)) {
            case "yes", "true" -> true;
            case "no", "false" -> false;
            default -> throw row.error(column, "'" + CsvRow.clipped(row.raw(column)) + "' is not yes or no");
        };
    }

    /** The host type of this name, e.g. to look up the on-demand price of a spot host. */
    public Optional<HostType> hostType(String name) {
        return hostTypes.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /** Every host of the fleet, as HostInventory records; host type order, then number. */
    public ClusterModel build() {
        List<HostInventory> hosts = new ArrayList<>();
        for (HostType type : hostTypes) {
            int width = Math.max(3, Integer.toString(Math.max(0, type.count() - 1)).length());
            for (int i = 0; i < type.count(); i++) {
                String id = type.name() + "-" + String.format(Locale.ROOT, "%0" + width + "d", i);
                boolean spot = i >= type.onDemandHosts();
                List<GpuDevice> gpus = new ArrayList<>();
                for (int g = 0; g < type.gpus(); g++) {
                    gpus.add(ClusterModel.gpu(id, g, type.gpuModel(), type.gpuMemoryMib(), type.nvlink() ? 0 : -1));
                }
                hosts.add(new HostInventory(id, id, type.name(), ZONE, spot ? CapacityType.SPOT : CapacityType.ON_DEMAND,
                        spot ? type.spotPriceMicrosPerHour() : type.priceMicrosPerHour(), type.cpuMillis(),
                        type.memoryMib(), type.fabric(), type.fabric() == null ? List.of() : List.of(type.fabric()),
                        gpus, List.of(), ClusterModel.BACKEND, ClusterModel.SIM_EPOCH));
            }
        }
        return new ClusterModel(name, hosts);
    }

    /** What the fleet would cost per hour with every host on demand, micro-USD. */
    public long onDemandPriceMicrosPerHour() {
        return hostTypes.stream().mapToLong(t -> t.count() * t.priceMicrosPerHour()).sum();
    }
}
