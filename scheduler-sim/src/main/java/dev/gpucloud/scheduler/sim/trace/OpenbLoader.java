package dev.gpucloud.scheduler.sim.trace;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads Alibaba's openb files (cluster-trace-gpu-v2023): the node list ({@code sn, cpu_milli,
 * memory_mib, gpu, model}) and the pod list ({@code name, cpu_milli, memory_mib, num_gpu,
 * gpu_milli}). Names must be unique; records come back in file order, which for pods is not the
 * arrival order (the published protocol shuffles them per seed).
 */
public final class OpenbLoader {

    public static final List<String> NODE_COLUMNS = List.of("sn", "cpu_milli", "memory_mib", "gpu", "model");
    public static final List<String> POD_COLUMNS = List.of("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli");

    private OpenbLoader() {
    }

    public static Loaded<OpenbNode> loadNodes(Path path) {
        return loadNodes(path, ErrorMode.STRICT);
    }

    public static Loaded<OpenbNode> loadNodes(Path path, ErrorMode mode) {
        List<OpenbNode> nodes = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        Loaded<Void> read = CsvFile.read(path, NODE_COLUMNS, false, mode, row -> {
            OpenbNode node = new OpenbNode(row.text("sn"),
                    row.intValue("cpu_milli", 0, Integer.MAX_VALUE),
                    row.longValue("memory_mib", 0, Long.MAX_VALUE),
                    row.intValue("gpu", 0, 1024),
                    row.text("model"));
            unique(row, "sn", seen);
            return node;
        }, nodes::add);
        return read.withItems(nodes);
    }

    public static Loaded<OpenbPod> loadPods(Path path) {
        return loadPods(path, ErrorMode.STRICT);
    }

    public static Loaded<OpenbPod> loadPods(Path path, ErrorMode mode) {
        List<OpenbPod> pods = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        Loaded<Void> read = CsvFile.read(path, POD_COLUMNS, false, mode, row -> {
            String name = row.text("name");
            int cpu = row.intValue("cpu_milli", 0, Integer.MAX_VALUE);
            long memory = row.longValue("memory_mib", 0, Long.MAX_VALUE);
            int numGpu = row.intValue("num_gpu", 0, 1024);
            int gpuMilli = row.intValue("gpu_milli", 0, OpenbPod.WHOLE_GPU_MILLI);
            if (numGpu == 0 && gpuMilli != 0) {
                throw row.error("gpu_milli", "'" + gpuMilli + "' on a pod with num_gpu 0 (must be 0)");
            }
            if (numGpu == 1 && gpuMilli == 0) {
                throw row.error("gpu_milli", "'0' on a pod with num_gpu 1 (must be within 1..1000)");
            }
            if (numGpu > 1 && gpuMilli != OpenbPod.WHOLE_GPU_MILLI) {
                throw row.error("gpu_milli", "'" + gpuMilli + "' on a pod with num_gpu " + numGpu
                        + " (a multi-GPU pod takes whole GPUs: must be 1000)");
            }
            unique(row, "name", seen);
            return new OpenbPod(name, cpu, memory, numGpu, gpuMilli);
        }, pods::add);
        return read.withItems(pods);
    }

    private static String unique(CsvRow row, String column, Map<String, Integer> seen) {
        String name = row.text(column);
        Integer earlier = seen.putIfAbsent(name, row.line());
        if (earlier != null) {
            throw row.error(column, "'" + CsvRow.clip(name) + "' repeats line " + earlier);
        }
        return name;
    }
}
