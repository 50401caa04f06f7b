package dev.gpucloud.autoscaler.core;

import java.util.List;

/** What one decision round asks for: launches, releases, and the reasons for them and for what it did not do. */
public record Plan(List<Launch> launches, List<Release> releases, List<Decision> decisions) {

    public Plan {
        launches = List.copyOf(launches);
        releases = List.copyOf(releases);
        decisions = List.copyOf(decisions);
    }

    /** Hosts asked for, over all launches. */
    public int hostsToLaunch() {
        int n = 0;
        for (Launch l : launches) {
            n += l.count();
        }
        return n;
    }

    /** The decisions of one kind, in plan order. */
    public List<Decision> decisions(Decision.Kind kind) {
        return decisions.stream().filter(d -> d.kind() == kind).toList();
    }

    /** The reasons, one line each: what an operator reads. */
    public String explain() {
        StringBuilder sb = new StringBuilder();
        for (Decision d : decisions) {
            sb.append(d.reason()).append('\n');
        }
        return sb.toString();
    }
}
