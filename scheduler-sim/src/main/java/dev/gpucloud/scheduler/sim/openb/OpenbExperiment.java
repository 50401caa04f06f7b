package dev.gpucloud.scheduler.sim.openb;

import dev.gpucloud.scheduler.packing.Distribution;
import dev.gpucloud.scheduler.packing.NodeView;
import dev.gpucloud.scheduler.packing.PackingPolicies;
import dev.gpucloud.scheduler.packing.PackingPolicy;
import dev.gpucloud.scheduler.packing.Placement;
import dev.gpucloud.scheduler.packing.TaskShape;
import dev.gpucloud.scheduler.sim.trace.OpenbNode;
import dev.gpucloud.scheduler.sim.trace.OpenbPod;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;

/**
 * The GPU-sharing experiment of the FGD paper on Alibaba's openb traces, with the protocol of
 * ../shared/traces/README.md: pods in a seeded random order, the list tuned to {@code targetShare}
 * (1.3) of the cluster's GPU milli, pods placed one at a time and never leaving, a pod that does not
 * fit dropped. After every attempt: arrived = requested GPU milli of all attempted pods, allocated =
 * GPU milli in use, each as % of the cluster's. The figure at X% is the mean allocated % over the
 * attempts whose arrived % rounds to X.
 */
public final class OpenbExperiment {

    public static final List<String> POLICIES = List.of("random", "bestfit", "fgd");
    /** Share of pods FGD's typical-shape distribution covers. */
    public static final double COVERAGE = 0.95;

    /**
     * One run. {@code allocatedAt[x]} is the mean allocated GPU % over attempts whose arrived % rounds
     * to x (NaN where none), likewise CPU and memory % (of the cluster's CPU and memory).
     */
    public record Result(String policy, long seed, int attempted, int failed, double[] allocatedAt, double[] cpuAt,
            double[] memoryAt) {

        public double allocatedPercentAt(int arrivedPercent) {
            return arrivedPercent < allocatedAt.length ? allocatedAt[arrivedPercent] : Double.NaN;
        }
    }

    private OpenbExperiment() {
    }

    /** The shape a pod asks for, any GPU model. */
    public static TaskShape shape(OpenbPod p) {
        return TaskShape.of(p.numGpu(), p.numGpu() == 0 ? 0 : p.gpuMilli(), p.cpuMilli(), p.memoryMib());
    }

    public static PackingPolicy policy(String name, List<OpenbPod> pods, long seed) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "random" -> PackingPolicies.random(seed);
            case "bestfit" -> PackingPolicies.bestFit();
            case "fgd" -> PackingPolicies.fgd(Distribution.of(pods.stream().map(OpenbExperiment::shape).toList(), COVERAGE));
            default -> throw new IllegalArgumentException("unknown packing policy '" + name + "' (known: "
                    + String.join(", ", POLICIES) + ")");
        };
    }

    /**
     * The arrival list of the protocol: shuffled by {@code seed}, then tuned to {@code targetMilli}: if the
     * list asks for more GPU milli, random pods are removed until it fits; if it asks for less, pods drawn
     * with replacement are appended until the next one would pass the target.
     */
    public static List<OpenbPod> arrivals(List<OpenbPod> pods, long seed, long targetMilli) {
        Random rnd = new Random(seed);
        List<OpenbPod> list = new ArrayList<>(pods);
        java.util.Collections.shuffle(list, rnd);
        long total = list.stream().mapToLong(OpenbPod::totalGpuMilli).sum();
        boolean appending = total < targetMilli;
        while (total > targetMilli) {
            OpenbPod removed = list.remove(rnd.nextInt(list.size()));
            total -= removed.totalGpuMilli();
        }
        boolean anyGpu = pods.stream().anyMatch(p -> p.totalGpuMilli() > 0);
        while (appending && anyGpu) {
            OpenbPod extra = pods.get(rnd.nextInt(pods.size()));
            if (total + extra.totalGpuMilli() > targetMilli) {
                break;
            }
            list.add(extra);
            total += extra.totalGpuMilli();
        }
        return list;
    }

    public static Result run(List<OpenbNode> nodes, List<OpenbPod> pods, String policyName, long seed,
            double targetShare) {
        long clusterMilli = 0;
        long clusterCpu = 0;
        long clusterMem = 0;
        List<NodeView> views = new ArrayList<>(nodes.size());
        for (OpenbNode n : nodes) {
            views.add(NodeView.empty(n.name(), n.gpus(), n.cpuMilli(), n.memoryMib(), n.model()));
            clusterMilli += (long) n.gpus() * NodeView.WHOLE;
            clusterCpu += n.cpuMilli();
            clusterMem += n.memoryMib();
        }
        PackingPolicy policy = policy(policyName, pods, seed);
        List<OpenbPod> arrivals = arrivals(pods, seed, Math.round(clusterMilli * targetShare));
        int size = (int) Math.ceil(targetShare * 100) + 2;
        double[] sum = new double[size];
        double[] cpuSum = new double[size];
        double[] memSum = new double[size];
        int[] count = new int[size];
        long arrived = 0;
        long allocated = 0;
        long cpuUsed = 0;
        long memUsed = 0;
        int failed = 0;
        for (OpenbPod pod : arrivals) {
            TaskShape task = shape(pod);
            Optional<Placement> p = policy.place(views, task);
            if (p.isPresent()) {
                NodeView node = views.get(p.get().nodeIndex());
                views.set(p.get().nodeIndex(), node.after(task, p.get().gpus()));
                allocated += task.totalGpuMilli();
                cpuUsed += task.cpuMilli();
                memUsed += task.memoryMib();
            } else {
                failed++;
            }
            arrived += task.totalGpuMilli();
            int x = (int) Math.round(arrived * 100.0 / clusterMilli);
            if (x < size) {
                sum[x] += allocated * 100.0 / clusterMilli;
                cpuSum[x] += cpuUsed * 100.0 / clusterCpu;
                memSum[x] += memUsed * 100.0 / clusterMem;
                count[x]++;
            }
        }
        double[] at = new double[size];
        double[] cpuAt = new double[size];
        double[] memAt = new double[size];
        for (int x = 0; x < size; x++) {
            at[x] = count[x] == 0 ? Double.NaN : sum[x] / count[x];
            cpuAt[x] = count[x] == 0 ? Double.NaN : cpuSum[x] / count[x];
            memAt[x] = count[x] == 0 ? Double.NaN : memSum[x] / count[x];
        }
        return new Result(policy.name(), seed, arrivals.size(), failed, at, cpuAt, memAt);
    }

    /** Mean over runs of a per-run figure, skipping NaN. */
    public static double mean(List<Result> runs, java.util.function.ToDoubleFunction<Result> f) {
        return runs.stream().mapToDouble(f).filter(v -> !Double.isNaN(v)).average().orElse(Double.NaN);
    }

    static double[] copy(double[] a) {
        return Arrays.copyOf(a, a.length);
    }
}
