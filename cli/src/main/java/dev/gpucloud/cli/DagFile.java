package dev.gpucloud.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonLocation;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A job file whose top is {@code jobs:}: named jobs, where an {@code after} entry may name another job of the file.
 * The scheduler only ever sees dependencies on jobs that exist, so it cannot see a cycle in a file: this is where
 * one is caught, with every name checked, before anything is sent. {@link #order} gives the jobs so that each comes
 * after every job of the file it names.
 */
final class DagFile {

    /** What a dependency that is not a name of the file must look like: an id the scheduler gave. */
    static final Pattern ID = Pattern.compile("(job|arr)-\\S+");
    /** The fields a DAG file's top may hold; the rest belongs to its jobs. */
    static final Set<String> TOP = Set.of("tenant", "request_id", "jobs");

    private DagFile() {
    }

    /** One job of the file: {@code index} is its place in the list, {@code needs} the names it runs after. */
    record Node(String name, int index, JobFile job, List<String> needs) {
    }

    /** The file's jobs, each after those it names; {@code source} names the file in errors. */
    static List<Node> order(String source, JobFile top) throws JobFile.Invalid {
        List<String> elsewhere = new ArrayList<>();
        for (RecordComponent c : JobFile.class.getRecordComponents()) {
            JsonProperty named = c.getAccessor().getAnnotation(JsonProperty.class);
            String field = named != null ? named.value() : c.getName();
            try {
                if (!TOP.contains(field) && c.getAccessor().invoke(top) != null) {
                    elsewhere.add(field);
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        if (!elsewhere.isEmpty()) {
            throw new JobFile.Invalid(source + ": jobs: a DAG file's top holds only tenant, request_id and jobs; "
                    + String.join(", ", elsewhere) + " go" + (elsewhere.size() == 1 ? "es" : "") + " in each job");
        }
        if (top.jobs().isEmpty()) {
            throw new JobFile.Invalid(source + ": jobs: an empty list; a DAG file has at least one job");
        }
        Map<String, Integer> byName = new LinkedHashMap<>();
        List<JobFile> jobs = top.jobs();
        for (int i = 0; i < jobs.size(); i++) {
            JobFile job = jobs.get(i);
            String at = source + ": jobs[" + i + "]";
            if (job == null) {
                throw new JobFile.Invalid(at + ": an empty entry; each is a job");
            }
            if (job.jobs() != null) {
                throw new JobFile.Invalid(at + ": a job of a DAG file holds no jobs of its own");
            }
            if (job.tenant() != null || job.requestId() != null) {
                throw new JobFile.Invalid(at + ": tenant and request_id go at the top of a DAG file, for all its jobs");
            }
            if (job.name() == null || job.name().isBlank()) {
                throw new JobFile.Invalid(at + ": every job of a DAG file has a name (after entries name it)");
            }
            Integer before = byName.putIfAbsent(job.name(), i);
            if (before != null) {
                throw new JobFile.Invalid(at + ": name '" + JobFile.clip(job.name()) + "' is jobs[" + before
                        + "]'s too; names are unique in a file");
            }
        }
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            JobFile job = jobs.get(i);
            List<String> needs = new ArrayList<>();
            for (JobFileFields.After a : job.after() == null ? List.<JobFileFields.After>of() : job.after()) {
                if (byName.containsKey(a.job())) {
                    needs.add(a.job());
                } else if (!ID.matcher(a.job()).matches()) {
                    throw new JobFile.Invalid(source + where(a.at()) + ": jobs[" + i + "].after: '"
                            + JobFile.clip(a.job()) + "' is no job of this file (" + String.join(", ", byName.keySet())
                            + ") and no job id (job-…, arr-…)");
                }
            }
            nodes.add(new Node(job.name(), i, job, List.copyOf(needs)));
        }
        return sorted(source, nodes);
    }

    /** Depth first, in the file's order: a job after its dependencies; a dependency met again on the path is a cycle. */
    private static List<Node> sorted(String source, List<Node> nodes) throws JobFile.Invalid {
        Map<String, Node> byName = new HashMap<>();
        nodes.forEach(n -> byName.put(n.name(), n));
        Map<String, Boolean> done = new HashMap<>();   // false: on the path now; true: placed
        List<Node> order = new ArrayList<>();
        for (Node n : nodes) {
            visit(source, n, byName, done, new ArrayList<>(), order);
        }
        return order;
    }

    private static void visit(String source, Node node, Map<String, Node> byName, Map<String, Boolean> done,
            List<String> path, List<Node> order) throws JobFile.Invalid {
        Boolean state = done.get(node.name());
        if (Boolean.TRUE.equals(state)) {
            return;
        }
        done.put(node.name(), false);
        path.add(node.name());
        for (JobFileFields.After a : node.job().after() == null ? List.<JobFileFields.After>of() : node.job().after()) {
            Node next = byName.get(a.job());
            if (next == null) {
                continue;
            }
            if (Boolean.FALSE.equals(done.get(next.name()))) {
                // "a -> b": a runs after b; the last arrow is the entry that closes the cycle
                List<String> cycle = new ArrayList<>(path.subList(path.indexOf(next.name()), path.size()));
                cycle.add(next.name());
                throw new JobFile.Invalid(source + where(a.at()) + ": jobs[" + node.index() + "].after: a cycle, "
                        + String.join(" -> ", cycle) + " (each runs after the next); nothing was submitted");
            }
            visit(source, next, byName, done, path, order);
        }
        path.remove(path.size() - 1);
        done.put(node.name(), true);
        order.add(node);
    }

    private static String where(JsonLocation at) {
        return at == null || at.getLineNr() <= 0 ? "" : " line " + at.getLineNr() + ", column " + at.getColumnNr();
    }
}
