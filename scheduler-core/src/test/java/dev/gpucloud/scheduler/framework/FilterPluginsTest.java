package dev.gpucloud.scheduler.framework;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.plugins.CapacityFilter;
import dev.gpucloud.scheduler.framework.plugins.FractionFit;
import dev.gpucloud.scheduler.framework.plugins.GpuFit;
import dev.gpucloud.scheduler.framework.plugins.HealthFilter;
import dev.gpucloud.scheduler.framework.plugins.HostResourcesFit;
import dev.gpucloud.scheduler.framework.plugins.MigFit;
import dev.gpucloud.scheduler.framework.plugins.NvlinkIslandFit;
import dev.gpucloud.scheduler.framework.plugins.RdmaFabricFilter;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each filter plugin against a table of hosts and requests: the status and its exact reason. */
class FilterPluginsTest {

    private static final String A100 = "A100-SXM4-80GB";

    static PlacementRequest req(int workers, int gpus) {
        return PlacementRequest.whole("j", workers, gpus);
    }

    static PlacementRequest req(int workers, int gpus, String mig, int milli) {
        return new PlacementRequest("j", "t", 0, workers, gpus, mig, milli, 0, 0, Set.of(), 0, false, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    static PlacementRequest models(String... models) {
        return new PlacementRequest("j", "t", 0, 1, 1, null, 0, 0, 0, Set.of(models), 0, false, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    static PlacementRequest memory(long mib) {
        return new PlacementRequest("j", "t", 0, 1, 2, null, 0, 0, 0, Set.of(), mib, false, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    static PlacementRequest nvlink(int gpus) {
        return new PlacementRequest("j", "t", 0, 1, gpus, null, 0, 0, 0, Set.of(), 0, false, true,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    static PlacementRequest capacity(CapacityPreference pref, long ceiling, Set<String> avoid) {
        return new PlacementRequest("j", "t", 0, 1, 1, null, 0, 0, 0, Set.of(), 0, false, false, pref, ceiling, null,
                avoid, PriorityClass.NORMAL);
    }

    static PlacementRequest cpu(int millis, long mib) {
        return new PlacementRequest("j", "t", 0, 1, 1, null, 0, millis, mib, Set.of(), 0, false, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    /** A fleet of one host, with {@code heldGpus} whole GPUs already taken. */
    static NodeState node(TestFleet.HostBuilder b, int heldGpus) {
        Fleet fleet = b.add(new Fleet());
        NodeState n = fleet.nodes().iterator().next();
        if (heldGpus > 0) {
            fleet.reserve(Assignment.whole("held", "other", "t", 0, n.id(),
                    java.util.stream.IntStream.range(0, heldGpus).boxed().toList(), 0, 0));
        }
        return n;
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                // plugin, host, request, expected reason ("" = fits)
                Arguments.of(new GpuFit(), node(host("h"), 0), req(1, 8), ""),
                Arguments.of(new GpuFit(), node(host("h"), 2), req(1, 8), "6 of 8 " + A100 + " free, need 8"),
                Arguments.of(new GpuFit(), node(host("h"), 2), req(1, 6), ""),
                Arguments.of(new GpuFit(), node(host("h").model("A10G", 24_576).gpus(1), 0), models(A100),
                        "no " + A100 + " GPUs"),
                Arguments.of(new GpuFit(), node(host("h").model("A10G", 24_576).gpus(1), 0), models("A10G", A100), ""),
                Arguments.of(new GpuFit(), node(host("h").model("A10G", 24_576).gpus(4), 0), memory(40_000),
                        "fewer than 2 GPUs with 40000 MiB"),
                Arguments.of(new GpuFit(), node(host("h").gpus(0), 0), models(A100), "no GPUs"),
                Arguments.of(new GpuFit(), node(host("h").mig(), 0), req(1, 1), "0 of 8 " + A100 + " free, need 1"),
                Arguments.of(new NvlinkIslandFit(), node(host("h").islands(4), 0), nvlink(4), ""),
                Arguments.of(new NvlinkIslandFit(), node(host("h").islands(4), 1), nvlink(4), ""),
                Arguments.of(new NvlinkIslandFit(), node(host("h").islands(4), 5), nvlink(4),
                        "no NVLink island with 4 free GPUs"),
                Arguments.of(new NvlinkIslandFit(), node(host("h").islands(4), 0), nvlink(8),
                        "no NVLink island with 8 free GPUs"),
                Arguments.of(new NvlinkIslandFit(), node(host("h").islands(4), 5), req(1, 3), ""),
                Arguments.of(new MigFit(), node(host("h").mig(), 0), req(1, 0, "3g.40gb", 0), ""),
                Arguments.of(new MigFit(), node(host("h"), 0), req(1, 0, "3g.40gb", 0), "no MIG-mode GPUs"),
                Arguments.of(new MigFit(), node(host("h").mig(), 0), req(1, 0, "1g.10gb+me", 0), ""),
                Arguments.of(new MigFit(), node(host("h").model("A30", 24_576).gpus(1).mig(), 0), req(1, 0, "2g.12gb", 0), ""),
                Arguments.of(new MigFit(), node(host("h").model("B200", 183_359).gpus(1).mig(), 0), req(1, 0, "3g.40gb", 0),
                        "MIG profile 3g.40gb not offered by B200"),
                Arguments.of(new GpuFit(), node(host("h").model("B200", 183_359).gpus(1).mig(), 0), req(1, 1),
                        "0 of 1 B200 free, need 1"),
                Arguments.of(new MigFit(), node(host("h").mig(), 0), req(1, 0, "3g.20gb", 0),
                        "MIG profile 3g.20gb not offered by " + A100),
                Arguments.of(new FractionFit(), node(host("h"), 0), req(1, 0, null, 125), ""),
                Arguments.of(new FractionFit(), node(host("h").gpus(2), 2), req(1, 0, null, 125),
                        "no GPU with 125 milli free"),
                Arguments.of(new FractionFit(), node(host("h").mig(), 0), req(1, 0, null, 125), "no shareable GPUs"),
                Arguments.of(new HostResourcesFit(), node(host("h").cpu(8000, 65_536), 0), cpu(8000, 65_536), ""),
                Arguments.of(new HostResourcesFit(), node(host("h").cpu(8000, 65_536), 0), cpu(8001, 1),
                        "not enough free CPU (need 8001 millicores)"),
                Arguments.of(new HostResourcesFit(), node(host("h").cpu(8000, 65_536), 0), cpu(1, 65_537),
                        "not enough free memory (need 65537 MiB)"),
                Arguments.of(new CapacityFilter(), node(host("h").spot(10_000_000), 0),
                        capacity(CapacityPreference.ON_DEMAND, 0, Set.of()), "spot capacity, job wants on-demand"),
                Arguments.of(new CapacityFilter(), node(host("h"), 0),
                        capacity(CapacityPreference.SPOT, 0, Set.of()), "not spot capacity, job wants spot"),
                Arguments.of(new CapacityFilter(), node(host("h").spot(10_000_000), 0),
                        capacity(CapacityPreference.SPOT_PREFERRED, 0, Set.of()), ""),
                Arguments.of(new CapacityFilter(), node(host("h").spot(10_000_000), 0),
                        capacity(CapacityPreference.SPOT, 0, Set.of("zone-a/p4de.24xlarge")),
                        "spot pool recently interrupted"),
                Arguments.of(new CapacityFilter(), node(host("h").price(32_000_000), 0),
                        capacity(CapacityPreference.ON_DEMAND, 3_999_999, Set.of()), "price over the job's ceiling"),
                Arguments.of(new CapacityFilter(), node(host("h").price(32_000_000), 0),
                        capacity(CapacityPreference.ON_DEMAND, 4_000_000, Set.of()), ""),
                Arguments.of(new RdmaFabricFilter(), node(host("h"), 0), req(2, 8), "no RDMA fabric"),
                Arguments.of(new RdmaFabricFilter(), node(host("h").leaf("f", "s", "l"), 0), req(2, 8), ""),
                Arguments.of(new RdmaFabricFilter(), node(host("h"), 0), req(1, 8), ""));
    }

    @ParameterizedTest(name = "[{index}] {0}: {3}")
    @MethodSource("cases")
    void filters(Plugins.Filter plugin, NodeState node, PlacementRequest request, String reason) {
        Status s = plugin.filter(state(), request, node);
        assertThat(s.isSuccess() ? "" : s.reason()).isEqualTo(reason);
        if (!s.isSuccess()) {
            assertThat(s.plugin()).isEqualTo(plugin.name());
        }
    }

    static Stream<Arguments> health() {
        return Stream.of(
                Arguments.of("heard now", (Setup) (f, id) -> { }, ""),
                Arguments.of("draining", (Setup) (f, id) -> f.drain(id, true), "draining"),
                Arguments.of("notice", (Setup) (f, id) -> f.interruption(id, NOW + 120_000), "spot interruption notice"),
                Arguments.of("rebalance", (Setup) (f, id) -> f.rebalance(id, NOW), "rebalance recommended"),
                Arguments.of("xid", (Setup) (f, id) -> f.criticalXid(id, 79, NOW - 1000), "recent critical XID 79"),
                Arguments.of("old xid", (Setup) (f, id) -> f.criticalXid(id, 79, NOW - 3_600_001), ""),
                Arguments.of("silent", (Setup) (f, id) -> { }, "no heartbeat lately (host may be gone)"));
    }

    interface Setup {
        void apply(Fleet fleet, String nodeId);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("health")
    void health(String name, Setup setup, String reason) {
        Fleet fleet = new Fleet();
        fleet.upsert(host("h").inventory(), name.equals("silent") ? NOW - 45_001 : NOW);
        setup.apply(fleet, "h");
        Status s = new HealthFilter().filter(new CycleState(fleet, NOW, Profile.defaults()), req(1, 1),
                fleet.node("h").orElseThrow());
        assertThat(s.isSuccess() ? "" : s.reason()).isEqualTo(reason);
    }

    private static CycleState state() {
        return new CycleState(new Fleet(), NOW, Profile.defaults());
    }

    @org.junit.jupiter.api.Test
    void preFiltersRejectShapesNoGpuHas() {
        CycleState s = state();
        assertThat(new MigFit().preFilter(s, req(1, 0, "9g.1gb", 0)).reason()).isEqualTo("unknown MIG profile 9g.1gb");
        assertThat(new MigFit().preFilter(s, req(1, 0, "9g.1gb", 0)).code()).isEqualTo(Status.Code.UNRESOLVABLE);
        assertThat(new FractionFit().preFilter(s, req(1, 0, null, 1001)).code()).isEqualTo(Status.Code.UNRESOLVABLE);
        assertThat(new MigFit().preFilter(s, req(1, 0, "1g.10gb", 0)).isSuccess()).isTrue();
        assertThat(List.of(new GpuFit().preFilter(s, req(1, 8)))).containsExactly(Status.SUCCESS);
    }
}
