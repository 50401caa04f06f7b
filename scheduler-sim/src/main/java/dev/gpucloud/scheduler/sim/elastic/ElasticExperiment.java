package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One window of a trace on three fleets with the same settings, placement and FIFO order: the elastic fleet,
 * a static on-demand fleet sized for the peak of the window's GPU demand, and one sized for its mean.
 */
public final class ElasticExperiment {

    /** The three runs of a window, and the elastic run's time series. */
    public record Window(String name, Demand demand, int peakHosts, int meanHosts, FleetResult elastic,
            FleetResult peak, FleetResult mean, TimeSeries series) {}

    private ElasticExperiment() {}

    /** The jobs of the first or second half by submission time (ties by trace order). */
    public static List<TraceJob> half(List<TraceJob> jobs, boolean first) {
        List<TraceJob> sorted = new ArrayList<>(jobs);
        sorted.sort(Comparator.comparingLong(TraceJob::submitMillis));
        int mid = sorted.size() / 2;
        return first ? sorted.subList(0, mid) : sorted.subList(mid, sorted.size());
    }

    public static Window run(String name, List<TraceJob> jobs, ElasticSettings settings) {
        Demand d = Demand.of(jobs);
        int peakHosts = d.hostsFor(d.peakGpus(), SimHost.MAX_GPUS);
        int meanHosts = d.hostsFor(d.meanGpus(), SimHost.MAX_GPUS);
        TimeSeries series = new TimeSeries();
        FleetResult elastic = FleetSimulation.elastic(name, jobs, settings, series);
        FleetResult peak = FleetSimulation.fixed(name, "static-peak", jobs, peakHosts, settings, null);
        FleetResult mean = FleetSimulation.fixed(name, "static-mean", jobs, meanHosts, settings, null);
        return new Window(name, d, peakHosts, meanHosts, elastic, peak, mean, series);
    }
}
