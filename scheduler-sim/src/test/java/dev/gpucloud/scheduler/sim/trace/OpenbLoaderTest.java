package dev.gpucloud.scheduler.sim.trace;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class OpenbLoaderTest {

    private static final String NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model";
    private static final String POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli";

    @TempDir
    Path dir;

    @Test
    void the_node_list_reads_cpu_memory_gpus_and_model_in_file_order() {
        Loaded<OpenbNode> nodes = OpenbLoader.loadNodes(fixture("openb-nodes-small.csv"));
        assertThat(nodes.items()).containsExactly(
                new OpenbNode("node-a", 64_000, 262_144, 2, "P100"),
                new OpenbNode("node-b", 96_000, 393_216, 8, "G2"),
                new OpenbNode("node-c", 32_000, 131_072, 1, "T4"),
                new OpenbNode("node-d", 96_000, 786_432, 8, "V100M32"));
    }

    @Test
    void the_pod_list_reads_cpu_only_shared_whole_and_multi_gpu_pods() {
        Loaded<OpenbPod> pods = OpenbLoader.loadPods(fixture("openb-pods-small.csv"));
        assertThat(pods.items()).containsExactly(
                new OpenbPod("pod-cpu", 4_000, 8_192, 0, 0),
                new OpenbPod("pod-share", 6_000, 12_288, 1, 460),
                new OpenbPod("pod-whole", 12_000, 16_384, 1, 1000),
                new OpenbPod("pod-eight", 64_000, 262_144, 8, 1000));
        assertThat(pods.items()).extracting(OpenbPod::totalGpuMilli).containsExactly(0L, 460L, 1000L, 8000L);
        assertThat(pods.items()).extracting(OpenbPod::isShare).containsExactly(false, true, false, false);
    }

    static Stream<Arguments> malformedNodes() {
        return Stream.of(
                Arguments.of("cpu is text", "n1,lots,1024,2,T4", "nodes.csv:2: column 'cpu_milli': 'lots' is not a number"),
                Arguments.of("gpu is negative", "n1,1000,1024,-2,T4",
                        "nodes.csv:2: column 'gpu': '-2' is out of range (must be within 0..1024)"),
                Arguments.of("model is empty", "n1,1000,1024,2,", "nodes.csv:2: column 'model': is empty"),
                Arguments.of("memory is empty", "n1,1000,,2,T4",
                        "nodes.csv:2: column 'memory_mib': is empty, expected a number"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedNodes")
    void a_malformed_node_row_names_file_line_and_column(String name, String row, String message) {
        Path file = write(dir, "nodes.csv", NODE_HEADER, row);
        assertThatThrownBy(() -> OpenbLoader.loadNodes(file)).isInstanceOf(TraceFormatException.class).hasMessage(message);
    }

    @Test
    void a_repeated_host_name_is_an_error_naming_the_first_line() {
        Path file = write(dir, "nodes.csv", NODE_HEADER, "n0,1000,1024,2,T4", "n0,2000,1024,2,T4");
        assertThatThrownBy(() -> OpenbLoader.loadNodes(file)).hasMessage("nodes.csv:3: column 'sn': 'n0' repeats line 2");
    }

    static Stream<Arguments> malformedPods() {
        return Stream.of(
                Arguments.of("gpu_milli over a whole GPU", "p1,1000,1024,1,1001",
                        "pods.csv:2: column 'gpu_milli': '1001' is out of range (must be within 0..1000)"),
                Arguments.of("cpu-only pod with a GPU share", "p1,1000,1024,0,500",
                        "pods.csv:2: column 'gpu_milli': '500' on a pod with num_gpu 0 (must be 0)"),
                Arguments.of("one-GPU pod asking for nothing", "p1,1000,1024,1,0",
                        "pods.csv:2: column 'gpu_milli': '0' on a pod with num_gpu 1 (must be within 1..1000)"),
                Arguments.of("multi-GPU pod with a share", "p1,1000,1024,2,500",
                        "pods.csv:2: column 'gpu_milli': '500' on a pod with num_gpu 2 "
                                + "(a multi-GPU pod takes whole GPUs: must be 1000)"),
                Arguments.of("memory is fractional", "p1,1000,10.5,1,500",
                        "pods.csv:2: column 'memory_mib': '10.5' is not a whole number"),
                Arguments.of("name is empty", ",1000,1024,1,500", "pods.csv:2: column 'name': is empty"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedPods")
    void a_malformed_pod_row_names_file_line_and_column(String name, String row, String message) {
        Path file = write(dir, "pods.csv", POD_HEADER, row);
        assertThatThrownBy(() -> OpenbLoader.loadPods(file)).isInstanceOf(TraceFormatException.class).hasMessage(message);
    }

    @Test
    void lenient_loading_skips_and_counts_malformed_pods() {
        Path file = write(dir, "pods.csv", POD_HEADER, "p1,1000,1024,1,500", "p2,1000,1024,0,500", "p1,1,1,0,0",
                "p3,1000,1024,4,1000");
        Loaded<OpenbPod> pods = OpenbLoader.loadPods(file, ErrorMode.LENIENT);
        assertThat(pods.items()).extracting(OpenbPod::name).containsExactly("p1", "p3");
        assertThat(pods.skippedRows()).isEqualTo(2);
        assertThat(pods.problems().get(1)).isEqualTo("pods.csv:4: column 'name': 'p1' repeats line 2");
    }

    @Test
    void header_only_files_have_no_nodes_or_pods() {
        assertThat(OpenbLoader.loadNodes(write(dir, "nodes.csv", NODE_HEADER)).items()).isEmpty();
        assertThat(OpenbLoader.loadPods(write(dir, "pods.csv", POD_HEADER)).items()).isEmpty();
    }

    @Test
    void empty_and_missing_files_fail() {
        assertThatThrownBy(() -> OpenbLoader.loadNodes(fixture("empty.csv")))
                .hasMessage("empty.csv: file is empty; expected a header row with columns sn, cpu_milli, memory_mib, gpu, model");
        assertThatThrownBy(() -> OpenbLoader.loadPods(dir.resolve("pods.csv")))
                .isInstanceOf(TraceFormatException.class).hasMessageStartingWith("pods.csv: no such file");
    }
}
