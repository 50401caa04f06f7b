package dev.gpucloud.scheduler.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.scheduler.Fixtures;
import dev.gpucloud.scheduler.state.JobArrays.Parameter;
import dev.gpucloud.scheduler.state.JobArrays.Plan;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An array's elements: how many, and the variables each gets; and what an array may not ask. */
class JobArraysTest {

    @Test
    void aCountMakesThatManyElementsEachWithItsIndex() {
        Plan plan = JobArrays.plan(16, List.of());
        List<JobSpec> elements = JobArrays.elements(Fixtures.mkJob(1, 1), "arr-abc", plan);
        assertThat(elements).hasSize(16);
        assertThat(elements.get(7).env()).containsEntry("GPUCLOUD_ARRAY_ID", "arr-abc")
                .containsEntry("GPUCLOUD_ARRAY_INDEX", "7").containsEntry("GPUCLOUD_ARRAY_COUNT", "16");
        assertThat(JobArrays.elementId("arr-abc", 7)).isEqualTo("arr-abc-7");
        assertThat(JobArrays.elementRequestId("sweep-1", 7)).isEqualTo("sweep-1[7]");
    }

    @Test
    void aGridMakesEveryCombinationWithTheLastParameterVaryingFastest() {
        Plan plan = JobArrays.plan(0, List.of(new Parameter("LR", List.of("1e-3", "1e-4")),
                new Parameter("BATCH", List.of("32", "64", "128"))));
        assertThat(plan.count()).isEqualTo(6);
        assertThat(JobArrays.variables("arr-x", plan, 0)).containsEntry("LR", "1e-3").containsEntry("BATCH", "32");
        assertThat(JobArrays.variables("arr-x", plan, 2)).containsEntry("LR", "1e-3").containsEntry("BATCH", "128");
        assertThat(JobArrays.variables("arr-x", plan, 3)).containsEntry("LR", "1e-4").containsEntry("BATCH", "32");
        assertThat(JobArrays.variables("arr-x", plan, 5)).containsEntry("LR", "1e-4").containsEntry("BATCH", "128");
        assertThat(JobArrays.plan(6, plan.parameters()).count()).as("a count that agrees").isEqualTo(6);
    }

    @Test
    void badArraysAreRefusedNamingTheField() {
        assertThatThrownBy(() -> JobArrays.plan(1_000_000, List.of())).hasMessageContaining("array.count");
        assertThatThrownBy(() -> JobArrays.plan(0, List.of())).hasMessageContaining("array.count");
        assertThatThrownBy(() -> JobArrays.plan(5, List.of(new Parameter("LR", List.of("1", "2")))))
                .hasMessageContaining("array.count").hasMessageContaining("2 combinations");
        assertThatThrownBy(() -> JobArrays.plan(0, List.of(new Parameter("1LR", List.of("1")))))
                .hasMessageContaining("array.parameters[0].name");
        assertThatThrownBy(() -> JobArrays.plan(0, List.of(new Parameter("GPUCLOUD_X", List.of("1")))))
                .hasMessageContaining("GPUCLOUD_");
        assertThatThrownBy(() -> JobArrays.plan(0, List.of(new Parameter("A", List.of("1")),
                new Parameter("A", List.of("2"))))).hasMessageContaining("repeats 'A'");
        assertThatThrownBy(() -> JobArrays.plan(0, List.of(new Parameter("A", List.of()))))
                .hasMessageContaining("array.parameters[0].values");
        List<String> hundred = java.util.stream.IntStream.range(0, 100).mapToObj(Integer::toString).toList();
        assertThatThrownBy(() -> JobArrays.plan(0, List.of(new Parameter("A", hundred), new Parameter("B", hundred),
                new Parameter("C", hundred)))).hasMessageContaining("over 10000 combinations");
    }

    @Test
    void aSpecThatSetsAVariableTheArraySetsIsRefused() {
        JobSpec spec = Fixtures.mkJob(1, 1).withEnv(Map.of("LR", "0.1"));
        Plan plan = JobArrays.plan(0, List.of(new Parameter("LR", List.of("1e-3"))));
        assertThatThrownBy(() -> JobArrays.elements(spec, "arr-x", plan)).hasMessageContaining("'LR'");
    }
}
