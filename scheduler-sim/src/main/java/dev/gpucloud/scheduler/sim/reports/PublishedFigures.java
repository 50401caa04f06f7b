package dev.gpucloud.scheduler.sim.reports;

import java.util.Map;

/**
 * Published figures the simulator is compared with, as listed in ../shared/traces/README.md. Muri
 * (Zhao et al., SIGCOMM'22), from Rivendile/Muri simulator/draw_fig9-10.py: average JCT, makespan and
 * p99 JCT in seconds on the 64-GPU cluster. FGD (Weng et al., USENIX ATC'23), as reproduced by
 * hkust-adsl/kubernetes-scheduler-simulator: allocated GPU % at 130% arrival on openb multigpu50,
 * mean of 10 seeds.
 */
public final class PublishedFigures {

    /** avg JCT, makespan, p99 JCT (s). */
    public record Muri(double avgJct, double makespan, double p99Jct) {
    }

    public static final Map<String, Muri> MURI = Map.ofEntries(
            Map.entry("trace2/srtf", new Muri(2_665_607, 48_847_005, 33_128_484)),
            Map.entry("trace2/srsf", new Muri(2_213_950, 49_026_465, 31_241_251)),
            Map.entry("trace2/tiresias", new Muri(7_396_369, 48_117_093, 37_913_098)),
            Map.entry("trace2_pr/srtf", new Muri(4_079_154, 48_697_595, 36_640_840)),
            Map.entry("trace2_pr/srsf", new Muri(3_384_600, 47_972_348, 34_656_644)),
            Map.entry("trace2_pr/tiresias", new Muri(10_555_502, 47_686_998, 44_369_455)),
            Map.entry("trace4/srtf", new Muri(581_983, 14_787_991, 7_768_533)),
            Map.entry("trace4/srsf", new Muri(487_167, 14_887_909, 7_372_568)),
            Map.entry("trace4/tiresias", new Muri(1_319_383, 13_073_839, 8_663_312)),
            Map.entry("trace4_pr/srtf", new Muri(1_430_856, 14_272_665, 9_443_500)),
            Map.entry("trace4_pr/srsf", new Muri(1_218_502, 14_426_755, 9_227_908)),
            Map.entry("trace4_pr/tiresias", new Muri(2_674_023, 12_584_604, 11_219_878)));

    /** Allocated GPU % at 130% arrival, multigpu50. */
    public static final Map<String, Double> OPENB_130 = Map.of("random", 90.28, "bestfit", 95.74, "fgd", 97.18);
    /** Allocated GPU % at 100% arrival, multigpu50. */
    public static final Map<String, Double> OPENB_100 = Map.of("random", 81.28, "bestfit", 95.62, "fgd", 97.09);

    private PublishedFigures() {
    }
}
