package dev.gpucloud.scheduler.framework;

import dev.gpucloud.scheduler.framework.plugins.CapacityFilter;
import dev.gpucloud.scheduler.framework.plugins.DataLocalityScore;
import dev.gpucloud.scheduler.framework.plugins.FractionFit;
import dev.gpucloud.scheduler.framework.plugins.GpuFit;
import dev.gpucloud.scheduler.framework.plugins.HealthFilter;
import dev.gpucloud.scheduler.framework.plugins.HostResourcesFit;
import dev.gpucloud.scheduler.framework.plugins.MigFit;
import dev.gpucloud.scheduler.framework.plugins.NvlinkIslandFit;
import dev.gpucloud.scheduler.framework.plugins.PackingScore;
import dev.gpucloud.scheduler.framework.plugins.RdmaFabricFilter;
import dev.gpucloud.scheduler.framework.plugins.SpotCostScore;
import java.util.ArrayList;
import java.util.List;

/**
 * A scheduling profile: which plugins run at each extension point, the weight of each score, and
 * the cycle's knobs. {@code feasibleToScore} bounds how many feasible hosts a single-host decision
 * scores (hosts are visited fullest first, so the bound costs little packing; kube-scheduler's
 * percentageOfNodesToScore plays the same role).
 */
public record Profile(
        String name,
        List<Plugins.PreFilter> preFilters,
        List<Plugins.Filter> filters,
        List<Plugins.Score> scores,
        int[] weights,
        List<Plugins.Permit> permits,
        int feasibleToScore,
        long heartbeatTimeoutMillis,
        long xidQuarantineMillis) {

    public Profile {
        preFilters = List.copyOf(preFilters);
        filters = List.copyOf(filters);
        scores = List.copyOf(scores);
        permits = List.copyOf(permits);
        if (weights.length != scores.size()) {
            throw new IllegalArgumentException("profile " + name + " needs one weight per score plugin");
        }
        weights = weights.clone();
        if (feasibleToScore < 1) {
            throw new IllegalArgumentException("profile " + name + ": feasibleToScore must be at least 1");
        }
    }

    /** The production profile: every filter, and packing weighed over cost and data locality. */
    public static Profile defaults() {
        return builder("default").build();
    }

    /**
     * The profile the scheduler service places with, and the simulator's "production" policy too: the default
     * plugins, with {@code fgd} (fragmentation gradient descent, weight 2) among the scores.
     */
    public static Profile service(Plugins.Score fgd, long heartbeatTimeoutMillis, long xidQuarantineMillis,
            int feasibleToScore) {
        return builder("production").score(fgd, 2).heartbeatTimeoutMillis(heartbeatTimeoutMillis)
                .xidQuarantineMillis(xidQuarantineMillis).feasibleToScore(feasibleToScore).build();
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    public int weight(int i) {
        return weights[i];
    }

    /** Builds a profile from the default plugin set, with weights and knobs changed. */
    public static final class Builder {
        private final String name;
        private int packing = 3;
        private int spot = 2;
        private int locality = 1;
        private Plugins.Score extraScore;
        private int extraWeight;
        private int feasibleToScore = 32;
        private long heartbeatTimeoutMillis = 45_000;
        private long xidQuarantineMillis = 3_600_000;

        Builder(String name) {
            this.name = name;
        }

        public Builder weights(int packingWeight, int spotWeight, int localityWeight) {
            this.packing = packingWeight;
            this.spot = spotWeight;
            this.locality = localityWeight;
            return this;
        }

        /** Adds one more score plugin (e.g. a fragmentation-gradient score) with its weight. */
        public Builder score(Plugins.Score plugin, int weight) {
            this.extraScore = plugin;
            this.extraWeight = weight;
            return this;
        }

        public Builder feasibleToScore(int value) {
            this.feasibleToScore = value;
            return this;
        }

        public Builder heartbeatTimeoutMillis(long value) {
            this.heartbeatTimeoutMillis = value;
            return this;
        }

        public Builder xidQuarantineMillis(long value) {
            this.xidQuarantineMillis = value;
            return this;
        }

        public Profile build() {
            GpuFit gpuFit = new GpuFit();
            MigFit migFit = new MigFit();
            FractionFit fractionFit = new FractionFit();
            RdmaFabricFilter rdma = new RdmaFabricFilter();
            List<Plugins.Score> scores = new ArrayList<>(List.of(new PackingScore(), new SpotCostScore(),
                    new DataLocalityScore()));
            List<Integer> w = new ArrayList<>(List.of(packing, spot, locality));
            if (extraScore != null) {
                scores.add(extraScore);
                w.add(extraWeight);
            }
            return new Profile(name,
                    List.of(gpuFit, migFit, fractionFit, rdma),
                    List.of(new HealthFilter(), new CapacityFilter(), rdma, new HostResourcesFit(), gpuFit,
                            new NvlinkIslandFit(), migFit, fractionFit),
                    scores, w.stream().mapToInt(Integer::intValue).toArray(), List.of(), feasibleToScore,
                    heartbeatTimeoutMillis, xidQuarantineMillis);
        }
    }
}
