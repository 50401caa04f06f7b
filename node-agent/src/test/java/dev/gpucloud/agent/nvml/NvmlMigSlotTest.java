package dev.gpucloud.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.runner.ProcessRunner;
import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.agent.runner.RunnerSettings;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * MIG slots through the real process runner on the NVML backend, which creates and destroys MIG
 * instances in the fake libnvidia-ml: GPU 1 (H100 80GB, MIG mode) has 3g.40gb at slice 4 and
 * 1g.10gb at slice 0; GPU 0 is an H100 not in MIG mode; GPU 2 an A10G.
 */
class NvmlMigSlotTest {

    static final String NODE = "gpu-host-1";
    static final HostFacts HOST = new HostFacts(NODE, NODE, "p5.48xlarge", "us-east-1a", CapacityType.ON_DEMAND, 0,
            192_000, 2_048_000, null, List.of());
    static final String EXISTING_3G = "MIG-00000001-0000-2222-3333-444444444444";
    static final String EXISTING_1G = "MIG-00000001-0001-2222-3333-444444444444";

    @TempDir
    Path dir;

    private NvmlBackend backend;
    private ProcessRunner runner;
    private final List<Reports> reports = new ArrayList<>();
    private int commands;

    @AfterEach
    void close() {
        if (runner != null) {
            runner.close();
        }
        if (backend != null) {
            backend.close();
        }
    }

    private void open(String... scenario) throws Exception {
        Path lib = Files.createDirectories(dir.resolve("lib"));
        backend = new NvmlBackend(Nvml.open(Optional.of(FakeNvml.install(lib, scenario))), HOST, Clock.systemUTC());
        runner = new ProcessRunner(backend.inventory(), new RunnerSettings(dir.resolve("run"), Duration.ofSeconds(10),
                Duration.ofMillis(500), "SIGUSR1", Duration.ofSeconds(5)), Clock.systemUTC(), backend);
    }

    private Reports start(String alloc, int gpu, String mig, String script) {
        Reports r = runner.handle(new NodeCommand("c-" + (++commands), NodeCommandType.START, NODE, alloc, "job-" + alloc,
                "test-tenant", List.of(gpu), mig, 0, 0, 1, null, List.of("bash", "-c", script), Map.of(), null, null,
                null, Instant.now()));
        reports.add(r);
        return r;
    }

    private AllocationEvent event(String alloc, AllocationEventType type) {
        return reports.stream().flatMap(r -> r.allocationEvents().stream())
                .filter(e -> e.allocationId().equals(alloc) && e.type() == type).findFirst().orElse(null);
    }

    private String logOf(String alloc) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (event(alloc, AllocationEventType.EXITED) == null) {
            assertThat(System.nanoTime()).as("waiting for %s to exit: %s", alloc, reports).isLessThan(until);
            Thread.sleep(20);
            reports.add(runner.advance());
        }
        return Files.readString(dir.resolve("run").resolve(alloc).resolve(ProcessRunner.LOG_FILE));
    }

    private List<MigInstance> gpu1() {
        return backend.inventory().get(0).gpus().get(1).migInstances();
    }

    @Test
    void aSlotThatAnInstanceAlreadyTakesRunsOnItWithItsUuid() throws Exception {
        open();

        Reports r = start("a1", 1, "3g.40gb@4", "echo dev=$CUDA_VISIBLE_DEVICES");

        AllocationEvent started = event("a1", AllocationEventType.STARTED);
        assertThat(started).isNotNull();
        assertThat(started.migInstanceUuid()).isEqualTo(EXISTING_3G);
        assertThat(r.inventoryChanged()).isEmpty();
        assertThat(logOf("a1")).contains("dev=" + EXISTING_3G);
        assertThat(event("a1", AllocationEventType.EXITED).exitCode()).isZero();
    }

    @Test
    void aFreeSlotGetsANewInstanceThroughNvmlAndTheInventoryShowsIt() throws Exception {
        open();

        Reports r = start("a2", 1, "2g.20gb@2", "echo dev=$CUDA_VISIBLE_DEVICES");

        AllocationEvent started = event("a2", AllocationEventType.STARTED);
        assertThat(started).as("reports: %s", reports).isNotNull();
        String uuid = started.migInstanceUuid();
        assertThat(uuid).startsWith("MIG-").isNotIn(EXISTING_3G, EXISTING_1G);
        assertThat(gpu1()).extracting(MigInstance::profile, MigInstance::uuid, MigInstance::placementStart)
                .contains(org.assertj.core.api.Assertions.tuple("2g.20gb", uuid, 2)).hasSize(3);
        assertThat(r.inventoryChanged()).containsExactly(NODE);
        assertThat(r.notes()).anySatisfy(n -> assertThat(n).contains("created MIG instance 2g.20gb@2"));
        assertThat(logOf("a2")).contains("dev=" + uuid);
        assertThat(runner.running()).isEmpty();

        start("a3", 1, "2g.20gb@2", "true");
        assertThat(event("a3", AllocationEventType.STARTED).migInstanceUuid()).as("the slot now exists").isEqualTo(uuid);
    }

    @Test
    void idleInstancesInTheWayAreDestroyedFirst() throws Exception {
        open();

        start("a4", 1, "3g.40gb@0", "true");

        String uuid = event("a4", AllocationEventType.STARTED).migInstanceUuid();
        assertThat(gpu1()).extracting(MigInstance::profile, MigInstance::placementStart)
                .containsExactlyInAnyOrder(org.assertj.core.api.Assertions.tuple("3g.40gb", 0),
                        org.assertj.core.api.Assertions.tuple("3g.40gb", 4));
        assertThat(gpu1()).extracting(MigInstance::uuid).contains(uuid).doesNotContain(EXISTING_1G);
        assertThat(reports.get(0).notes()).anySatisfy(n -> assertThat(n).contains("destroyed idle MIG instance 1g.10gb@0"));
    }

    @Test
    void aBusyInstanceInTheWayRefusesTheSlot() throws Exception {
        open();
        start("busy", 1, "1g.10gb@0", "sleep 30");
        assertThat(event("busy", AllocationEventType.STARTED).migInstanceUuid()).isEqualTo(EXISTING_1G);

        start("b1", 1, "3g.40gb@0", "true");
        start("b2", 1, "1g.10gb@0", "true");

        assertThat(event("b1", AllocationEventType.LOST).detail())
                .contains("cannot start: MIG slot 3g.40gb@0", "slices 0-3", "1g.10gb@0", "busy with busy");
        assertThat(event("b1", AllocationEventType.LOST).heldBy()).containsExactly("busy");
        assertThat(event("b2", AllocationEventType.LOST).detail()).contains("1g.10gb@0", "is busy with busy");
        assertThat(event("b2", AllocationEventType.LOST).heldBy()).containsExactly("busy");
        assertThat(gpu1()).extracting(MigInstance::uuid).contains(EXISTING_1G, EXISTING_3G).hasSize(2);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "create=4                                          | NVML_ERROR_NO_PERMISSION",
        "create=23                                         | NVML_ERROR_INSUFFICIENT_RESOURCES",
        "unsupported=nvmlDeviceCreateGpuInstanceWithPlacement | NVML_ERROR_NOT_SUPPORTED",
        "ci=23                                             | nvmlGpuInstanceCreateComputeInstance failed: NVML_ERROR_INSUFFICIENT_RESOURCES"})
    void nvmlRefusingTheInstanceAnswersTheStartWithItsReason(String scenario, String reason) throws Exception {
        open(scenario);

        Reports r = start("n1", 1, "2g.20gb@2", "true");

        AllocationEvent exited = event("n1", AllocationEventType.EXITED);
        assertThat(event("n1", AllocationEventType.STARTED)).isNull();
        assertThat(exited.exitCode()).isEqualTo(ProcessRunner.EXIT_CANNOT_START);
        assertThat(exited.detail()).startsWith("cannot start: MIG slot 2g.20gb@2 on GPU 1 of " + NODE + ": NVML refused:")
                .contains(reason);
        assertThat(gpu1()).as("nothing left half-made").hasSize(2);
        assertThat(r.inventoryChanged()).isEmpty();
    }

    @Test
    void anInstanceThatCannotBeDestroyedRefusesTheSlotAndTheLedgerStaysTrue() throws Exception {
        open("destroy=19");

        start("d1", 1, "3g.40gb@0", "true");

        assertThat(event("d1", AllocationEventType.EXITED).detail()).contains("MIG slot 3g.40gb@0",
                "cannot destroy idle instance 1g.10gb@0", "NVML_ERROR_IN_USE");
        start("d2", 1, "1g.10gb@0", "true");
        assertThat(event("d2", AllocationEventType.STARTED).migInstanceUuid()).isEqualTo(EXISTING_1G);
    }

    @ParameterizedTest(name = "{0} on GPU {1}")
    @CsvSource(delimiter = '|', value = {
        "3g.40gb@0 | 0 | GPU 0 (NVIDIA H100 80GB HBM3) on gpu-host-1 is not in MIG mode",
        "1g.10gb@0 | 2 | GPU 2 (NVIDIA A10G) on gpu-host-1 is not in MIG mode",
        "1g.5gb@0  | 1 | has no MIG profile 1g.5gb",
        "3g.40gb@2 | 1 | profile 3g.40gb cannot start at slice 2 (NVIDIA's placements for it: [0, 4])",
        "2g.20gb@6 | 1 | profile 2g.20gb cannot start at slice 6 (NVIDIA's placements for it: [0, 2, 4])",
        "1g.10gb@0 | 5 | GPU 5 does not exist on gpu-host-1"})
    void slotsTheGpuCannotHaveAreRefusedWithTheReason(String slot, int gpu, String reason) throws Exception {
        open();

        start("r1", gpu, slot, "true");

        AllocationEvent exited = event("r1", AllocationEventType.EXITED);
        assertThat(exited).as("reports: %s", reports).isNotNull();
        assertThat(exited.exitCode()).isEqualTo(ProcessRunner.EXIT_CANNOT_START);
        assertThat(exited.detail()).startsWith("cannot start: ").contains(reason);
    }

    @Test
    void aStartNamingAnInstanceByUuidStillRunsAndReportsIt() throws Exception {
        open();

        start("u1", 1, EXISTING_1G, "echo dev=$CUDA_VISIBLE_DEVICES");

        assertThat(event("u1", AllocationEventType.STARTED).migInstanceUuid()).isEqualTo(EXISTING_1G);
        assertThat(logOf("u1")).contains("dev=" + EXISTING_1G);
    }
}
