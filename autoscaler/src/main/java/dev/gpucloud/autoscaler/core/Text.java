package dev.gpucloud.autoscaler.core;

import java.util.List;

/** How decisions write numbers and jobs: one decimal for dollars, whole minutes, a job's shape in brackets. */
final class Text {

    private Text() {}

    /** Dollars with one decimal (36.2), without String.format: decisions are written per job. */
    static String usd(double v) {
        if (Double.isInfinite(v)) {
            return "unlimited";
        }
        long tenths = Math.round(v * 10);
        long abs = Math.abs(tenths);
        return (tenths < 0 ? "-" : "") + abs / 10 + "." + abs % 10;
    }

    /** Dollars with two decimals, for prices per host or per job. */
    static String usd2(double v) {
        long cents = Math.round(v * 100);
        long abs = Math.abs(cents);
        long c = abs % 100;
        return (cents < 0 ? "-" : "") + abs / 100 + "." + (c < 10 ? "0" : "") + c;
    }

    /** Whole minutes, rounded down. */
    static String minutes(long millis) {
        return millis / 60_000 + " min";
    }

    /** The models a job accepts, "any GPU" for none. */
    static String models(List<String> models) {
        if (models.isEmpty()) {
            return "any GPU";
        }
        return models.size() == 1 ? models.get(0) : String.join("/", models);
    }

    /** "job-1 (2x8 A100, checkpointable, fabric)". */
    static String job(PendingJob j) {
        StringBuilder sb = new StringBuilder(j.jobId()).append(" (").append(j.workers()).append('x')
                .append(j.gpusPerWorker()).append(' ').append(models(j.gpuModels()));
        if (j.checkpointable()) {
            sb.append(", checkpointable");
        }
        if (j.needsFabric()) {
            sb.append(", fabric");
        }
        return sb.append(')').toString();
    }

    /** Up to {@code shown} jobs described, then how many more. */
    static String jobs(List<PendingJob> jobs, int shown) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < jobs.size() && i < shown; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(job(jobs.get(i)));
        }
        if (jobs.size() > shown) {
            sb.append(" and ").append(jobs.size() - shown).append(" more");
        }
        return sb.toString();
    }
}
