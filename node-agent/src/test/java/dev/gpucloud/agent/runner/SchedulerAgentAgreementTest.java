package dev.gpucloud.agent.runner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.geometry.MigFamily;
import dev.gpucloud.geometry.MigProfile;
import dev.gpucloud.geometry.NvidiaMigTable;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The scheduler places and the agent admits by one rule: on one GPU, for seeded random sequences of
 * whole, fraction and MIG requests and releases, whatever the scheduler's placement framework places
 * the agent's {@link GpuLedger} accepts (a MIG slot at the start the scheduler chose), and whatever
 * the scheduler finds no room for the agent refuses too (a MIG profile at every start).
 */
class SchedulerAgentAgreementTest {

    private static final long NOW = 1_000_000L;
    private static final int[] MILLI = {100, 125, 250, 333, 500, 750, 999, 1000};

    @ParameterizedTest(name = "{0} (MIG {2}), seeds {3}..")
    @CsvSource({
        "A30,            24576,  true,  0",
        "A100-SXM4-40GB, 40960,  true,  100",
        "A100-SXM4-80GB, 81920,  true,  200",
        "H100-SXM5-80GB, 81559,  true,  300",
        "H100 NVL,       95830,  true,  400",
        "H200,           144384, true,  500",
        "A100-SXM4-40GB, 40960,  false, 600",
        "B200,           183359, true,  700",
    })
    void schedulerPlacementsAreWhatTheAgentAccepts(String model, long memoryMib, boolean mig, int firstSeed) {
        int[] placed = new int[3];
        for (int seed = firstSeed; seed < firstSeed + 40; seed++) {
            run(model, memoryMib, mig, new Random(seed), placed);
        }
        // the sequences did reach both sides: whole and fractions where the GPU shares, slices where it has MIG
        boolean listed = NvidiaMigTable.forGpu(model, memoryMib).isPresent();
        assertThat(placed[2] > 0).as("MIG placements").isEqualTo(mig && listed);
        assertThat(placed[0] > 0 && placed[1] > 0).as("whole and fraction placements").isEqualTo(!mig);
    }

    @Test
    void anA30InMigModeIsPlacedByTheSchedulerAndAcceptedByTheAgent() {
        int[] placed = new int[3];
        run("NVIDIA A30", 24_062, true, new Random(13), placed);
        assertThat(placed[2]).isPositive();
    }

    private static void run(String model, long memoryMib, boolean mig, Random random, int[] placed) {
        HostInventory host = new HostInventory("n", "n", "test", "zone-a", CapacityType.ON_DEMAND, 1_000_000, 96_000,
                1 << 20, null, List.of(), List.of(new GpuDevice(0, "GPU-0", model, memoryMib, null, -1, mig, List.of())),
                List.of(), "simulated", Instant.EPOCH);
        Fleet fleet = new Fleet();
        fleet.upsert(host, NOW);
        PlacementFramework scheduler = new PlacementFramework(Profile.defaults());
        GpuLedger agent = new GpuLedger(host);
        List<String> profiles = new ArrayList<>();
        NvidiaMigTable.families().forEach(f -> f.profiles().forEach(p -> profiles.add(p.name())));
        List<String> running = new ArrayList<>();
        int instances = 0;
        for (int step = 0; step < 40; step++) {
            if (!running.isEmpty() && random.nextInt(4) == 0) {
                String done = running.remove(random.nextInt(running.size()));
                fleet.unreserve(done);
                agent.release(done);
                continue;
            }
            String job = "job-" + step;
            int shape = random.nextInt(3);
            String profile = shape == 2 ? profiles.get(random.nextInt(profiles.size())) : null;
            int milli = shape == 1 ? MILLI[random.nextInt(MILLI.length)] : 0;
            int gpus = shape == 0 || milli == 1000 ? 1 : 0;
            PlacementRequest request = new PlacementRequest(job, "t", 0, 1, gpus, profile, gpus == 1 ? 0 : milli, 0, 0,
                    Set.of(), 0, false, false, CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
            Decision decision = scheduler.place(fleet, request, NOW);
            String what = model + " step " + step + ": " + (profile != null ? profile : gpus == 1 ? "whole" : milli + "m")
                    + " on " + agent.host().gpus().get(0).migInstances() + ", held " + running;
            if (!decision.isPlaced()) {
                if (profile == null) {
                    assertThat(agent.check(List.of(0), null, gpus == 1 ? 0 : milli).problem()).as(what).isNotNull();
                } else {
                    for (int start = 0; start <= 7; start++) {
                        assertThat(agent.check(List.of(0), profile + "@" + start, 0).problem()).as(what + " @" + start)
                                .isNotNull();
                    }
                }
                continue;
            }
            Assignment a = decision.assignments().get(0);
            GpuLedger.Result answer = agent.check(a.gpuIndices(), a.isMig() ? a.migProfile() + "@" + a.migStart() : null,
                    a.isMig() ? 0 : a.milliGpu() == 1000 ? 0 : a.milliGpu());
            assertThat(answer.problem()).as(what + " placed as " + a).isNull();
            GpuLedger.Claim claim = answer.claim();
            if (answer.create() != null) {
                MigSlots.Plan plan = answer.create();
                MigFamily family = NvidiaMigTable.forGpu(model, memoryMib).orElseThrow();
                MigProfile p = family.profile(plan.profile().name()).orElseThrow();
                MigInstance created = new MigInstance(++instances, p.name(), "MIG-" + instances, 1024L * p.memorySlices(),
                        plan.start());
                agent.changeMig(0, plan.destroy(), created);
                claim = agent.migClaim(0, created);
            }
            agent.hold(a.allocationId(), claim);
            placed[a.isMig() ? 2 : a.milliGpu() == 1000 ? 0 : 1]++;
            running.add(a.allocationId());
        }
    }
}
