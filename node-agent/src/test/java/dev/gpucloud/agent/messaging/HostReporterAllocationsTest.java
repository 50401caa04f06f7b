package dev.gpucloud.agent.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.sim.SimulatedFleet;
import dev.gpucloud.agent.sim.SimulationSettings;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each host's telemetry says what it runs: whole GPUs, fractions and MIG slots, and an empty list for an idle host. */
class HostReporterAllocationsTest {

    private final SimulatedFleet fleet = new SimulatedFleet(
            SimulationSettings.defaults().withFleet("a100x8,h100x8-mig"),
            Clock.fixed(Instant.parse("2026-12-01T00:00:00Z"), ZoneOffset.UTC));
    private final HostReporter reporter = new HostReporter(fleet, fleet, null);

    private static NodeCommand start(String node, String alloc, List<Integer> gpus, String mig, int milli) {
        return new NodeCommand(alloc + "/start", NodeCommandType.START, node, alloc, "job-" + alloc, "acme", gpus, mig,
                milli, 0, 1, null, List.of("sleep", "100"), Map.of(), null, null, null, Instant.now());
    }

    @Test
    void samplesListTheAllocationsEachHostRuns() {
        fleet.handle(start("sim-a100-0", "whole", List.of(0, 1), null, 0));
        fleet.handle(start("sim-a100-0", "share", List.of(2), null, 250));
        fleet.handle(start("sim-h100-mig-0", "mig", List.of(3), "3g.40gb@4", 0));
        reporter.remember(fleet.inventory());

        Map<String, List<AllocationReport>> running = reporter.running();

        assertThat(running.get("sim-a100-0")).extracting(AllocationReport::allocationId, AllocationReport::gpuIndices,
                AllocationReport::milliGpu).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("whole", List.of(0, 1), 1000),
                        org.assertj.core.groups.Tuple.tuple("share", List.of(2), 250));
        assertThat(running.get("sim-h100-mig-0")).singleElement().satisfies(r -> {
            assertThat(r.migInstanceUuid()).startsWith("MIG-");
            assertThat(r.migSlot()).isEqualTo("3g.40gb@4");
            assertThat(r.jobId()).isEqualTo("job-mig");
            assertThat(r.tenant()).isEqualTo("acme");
        });
    }
}
