package dev.gpucloud.geometry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.geometry.GpuAdmission.Verdict;
import dev.gpucloud.geometry.MigSlotPlanner.Instance;
import dev.gpucloud.geometry.MigSlotPlanner.Plan;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Slot plans on an A100 40GB with 3g.20gb at 4 (held), 1g.5gb at 0 and 1 (idle). */
class MigSlotPlannerTest {

    private static final List<Instance> GPU = List.of(new Instance("MIG-3g", "3g.20gb", 4, true),
            new Instance("MIG-a", "1g.5gb", 0, false), new Instance("MIG-b", "1g.5gb", 1, false));

    private static Plan plan(String slot, List<Instance> instances) {
        return MigSlotPlanner.plan(NvidiaMigTable.A100_40GB, MigSlot.parse(slot), instances);
    }

    @Test
    void anIdleInstanceAlreadyAtTheSlotIsReused() {
        Plan plan = plan("1g.5gb@1", GPU);
        assertThat(plan.verdict()).isEqualTo(Verdict.ADMITTED);
        assertThat(plan.reuse().id()).isEqualTo("MIG-b");
        assertThat(plan.creates()).isFalse();
    }

    @ParameterizedTest(name = "{0} destroys [{1}] first")
    @CsvSource({"1g.5gb@2, ''", "2g.10gb@0, MIG-a MIG-b", "1g.10gb@0, MIG-a MIG-b", "4g.20gb@0, MIG-a MIG-b"})
    void aFreeRangeIsCreatedAfterTheIdleInstancesInItsWay(String slot, String destroyed) {
        Plan plan = plan(slot, GPU);
        assertThat(plan.creates()).isTrue();
        assertThat(plan.destroy()).extracting(Instance::id)
                .containsExactlyElementsOf(destroyed.isBlank() ? List.of() : Arrays.asList(destroyed.split(" ")));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource({"3g.20gb@4, SLICES_HELD, MIG-3g", "1g.5gb@5, SLICES_HELD, MIG-3g", "7g.40gb@0, SLICES_HELD, MIG-3g",
        "4g.20gb@4, START_NOT_ALLOWED, ''", "3g.40gb@0, PROFILE_NOT_OFFERED, ''"})
    void refusalsNameTheHeldInstanceInTheWay(String slot, Verdict verdict, String blocking) {
        Plan plan = plan(slot, GPU);
        assertThat(plan.verdict()).isEqualTo(verdict);
        assertThat(plan.blocking() == null ? "" : plan.blocking().id()).isEqualTo(blocking);
        assertThat(plan.creates()).isFalse();
    }

    @Test
    void onlyOneMediaExtensionsInstancePerGpu() {
        List<Instance> held = List.of(new Instance("MIG-me", "1g.5gb+me", 6, true));
        Plan plan = plan("1g.5gb+me@0", held);
        assertThat(plan.verdict()).isEqualTo(Verdict.MEDIA_ENGINES_HELD);
        assertThat(plan.blocking().id()).isEqualTo("MIG-me");
        assertThat(plan("1g.5gb@0", held).creates()).isTrue();
    }

    @Test
    void anIdleMediaExtensionsInstanceMakesWayForAnother() {
        List<Instance> idle = List.of(new Instance("MIG-me", "1g.5gb+me", 6, false));
        assertThat(plan("1g.5gb+me@0", idle).destroy()).extracting(Instance::id).containsExactly("MIG-me");
    }

    @Test
    void anInstanceOfUnknownPlacementIsInTheWayOfEverything() {
        List<Instance> unknown = List.of(new Instance("MIG-x", "1g.5gb", null, true));
        assertThat(plan("1g.5gb@3", unknown).verdict()).isEqualTo(Verdict.SLICES_HELD);
    }

    @Test
    void aGpuNotInMigModeTakesNoSlot() {
        assertThat(MigSlotPlanner.plan(null, MigSlot.parse("1g.5gb@0"), List.of()).verdict())
                .isEqualTo(Verdict.NOT_IN_MIG_MODE);
    }
}
