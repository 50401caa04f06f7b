package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.JobSpec.Dependency;
import dev.gpucloud.contracts.events.JobState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Whether a job that runs after others may run: each of its dependencies names a job, or an array (then every
 * element of it), and asks that it succeed or only that it end. Decided from where those jobs stand now, without
 * a database: they all ended as asked ({@link Verdict.Met}), some have not ended yet ({@link Verdict.Waiting}), or
 * one ended otherwise, so the job can never run ({@link Verdict.Never}).
 *
 * <p>A dependency must exist when its dependent is submitted, so the graph of dependencies is acyclic by
 * construction: a job can only wait for jobs older than itself.
 */
public final class Dependencies {

    private Dependencies() {
    }

    /** One job a dependency names, as it stands: its id, state and reason. */
    public record Standing(String jobId, JobState state, String reason) {
    }

    /** What the job's dependencies say now. */
    public sealed interface Verdict {
        /** Every dependency ended as asked; {@code summary} says so for the job's reason. */
        record Met(String summary) implements Verdict {
        }

        /** Some have not ended yet; {@code reason} names them and what they wait for. */
        record Waiting(String reason) implements Verdict {
        }

        /** One ended otherwise than asked (or is gone): the job can never run, for {@code reason}. */
        record Never(String reason) implements Verdict {
        }
    }

    /**
     * The verdict for {@code after}, given the jobs each dependency names ({@code standing}, by the dependency's
     * id: one job for a job id, every element for an array id; missing or empty when there is none).
     */
    public static Verdict evaluate(List<Dependency> after, Map<String, List<Standing>> standing) {
        List<String> waiting = new ArrayList<>();
        for (Dependency d : after) {
            List<Standing> jobs = standing.getOrDefault(d.jobId(), List.of());
            if (jobs.isEmpty()) {
                return new Verdict.Never("dependency " + d.jobId() + " does not exist");
            }
            int ended = 0;
            for (Standing s : jobs) {
                if (!s.state().isFinal()) {
                    continue;
                }
                ended++;
                if (!d.onAny() && s.state() != JobState.SUCCEEDED) {
                    String which = jobs.size() == 1 && s.jobId().equals(d.jobId()) ? "dependency " + d.jobId()
                            : "element " + s.jobId() + " of dependency " + d.jobId();
                    return new Verdict.Never(which + " ended " + s.state()
                            + (s.reason() == null || s.reason().isBlank() ? "" : " (" + s.reason() + ")")
                            + ", and this job was to run after its success");
                }
            }
            if (ended < jobs.size()) {
                String what = d.onAny() ? "to end" : "to succeed";
                waiting.add(jobs.size() == 1 && jobs.get(0).jobId().equals(d.jobId())
                        ? d.jobId() + " (" + jobs.get(0).state() + ") " + what
                        : d.jobId() + " (" + ended + " of " + jobs.size() + " ended) " + what);
            }
        }
        if (!waiting.isEmpty()) {
            return new Verdict.Waiting("waiting for " + String.join(", ", waiting));
        }
        return new Verdict.Met(after.size() == 1 ? after.get(0).jobId() + " ended as asked"
                : "all " + after.size() + " dependencies ended as asked");
    }

    /**
     * The array a job is an element of, by its id ({@code arr-<hex>-<index>}: the array's id and the element's
     * index), or null for a job of its own.
     */
    public static String arrayOf(String jobId) {
        if (!jobId.startsWith(ARRAY_PREFIX)) {
            return null;
        }
        int dash = jobId.lastIndexOf('-');
        return dash > ARRAY_PREFIX.length() ? jobId.substring(0, dash) : null;
    }

    /** How an array's id begins; an element's id is the array's, a dash and its index. */
    public static final String ARRAY_PREFIX = "arr-";
}
