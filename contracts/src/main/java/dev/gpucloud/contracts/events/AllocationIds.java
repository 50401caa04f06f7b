package dev.gpucloud.contracts.events;

/**
 * How the scheduler names an allocation: {@code <jobId>-a<attempt>-r<rank>}, one per worker of each attempt
 * of a job. Billing reads the attempt back, so that a job's reruns are billed without a second minimum.
 */
public final class AllocationIds {

    private AllocationIds() {
    }

    /** The id of worker {@code rank} of attempt {@code attempt} (from 1) of job {@code jobId}. */
    public static String of(String jobId, int attempt, int rank) {
        return jobId + "-a" + attempt + "-r" + rank;
    }

    /**
     * The attempt {@code allocationId} belongs to, when it is one of job {@code jobId}'s ids in this form; 0 for any
     * other id (an allocation named by someone else, or by an older scheduler).
     */
    public static int attempt(String jobId, String allocationId) {
        if (jobId == null || allocationId == null || !allocationId.startsWith(jobId + "-a")) {
            return 0;
        }
        String rest = allocationId.substring(jobId.length() + 2);
        int r = rest.indexOf("-r");
        if (r < 1 || r > 9 || r + 2 >= rest.length() || !digits(rest, 0, r) || !digits(rest, r + 2, rest.length())) {
            return 0;
        }
        return Integer.parseInt(rest.substring(0, r));
    }

    private static boolean digits(String s, int from, int to) {
        if (to - from > 9) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
