package dev.gpucloud.scheduler.liveness;

import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Reconciles what each host's agent says it runs with what the scheduler holds for it.
 *
 * <ul>
 *   <li>An allocation the scheduler holds and the agent reports is adopted: nothing to do.</li>
 *   <li>An allocation the agent reports and the scheduler does not hold (it never placed it, or
 *       already counts it ended) holds its GPUs at once, so no new work is placed on a GPU that is
 *       busy, and is stopped if the agent still reports it after the grace period.</li>
 *   <li>An allocation the scheduler holds but the agent does not report is asked about (a STATUS,
 *       which changes nothing on the host) once it has been missing for the grace period: the agent
 *       answers with its last word on it (STARTED, EXITED or LOST), or LOST if it never ran it. The
 *       scheduler never declares it lost on absence alone.</li>
 *   <li>What an agent reports running is evidence that it started: the scheduler can take that as
 *       the STARTED it may have missed.</li>
 * </ul>
 * The grace period covers the races between a host's reports and its allocation events (a START on
 * its way, an exit the scheduler has not read yet). Reports come from {@code gpu.telemetry}; agents
 * that do not report allocations are left alone.
 */
public final class AllocationReconciler {

    private final long graceMillis;
    private final Map<String, HostReport> reports = new HashMap<>();
    /** Holds taken for allocations the scheduler does not own, by allocation id. */
    private final Map<String, Assignment> foreign = new LinkedHashMap<>();
    /** When each foreign hold's evidence was given (a report, a refused start): only newer word gives it back. */
    private final Map<String, Long> heldSince = new HashMap<>();
    private final Map<String, Long> unknownSince = new HashMap<>();
    private final Map<String, Long> absentSince = new HashMap<>();
    private final Map<String, Long> askedAt = new HashMap<>();
    /** The scheduler's own allocations that ended lately, and when: a report from before that may still list them. */
    private final LinkedHashMap<String, Long> endedAt = new LinkedHashMap<>();
    /** Unknown allocations whose conflict was already reported, so it is said once. */
    private final Set<String> conflicted = new HashSet<>();

    private record HostReport(long atMillis, Map<String, AllocationReport> running) {
    }

    /**
     * What a reconciliation asks of the scheduler: holds to take and give back, commands to send, and
     * its own allocations that their agents report running ({@code running}: evidence of a start).
     */
    public record Plan(List<Assignment> hold, List<String> release, List<Ask> asks, List<String> conflicts,
            List<AllocationReport> running) {
        public boolean isEmpty() {
            return hold.isEmpty() && release.isEmpty() && asks.isEmpty() && conflicts.isEmpty() && running.isEmpty();
        }

        /** The asks that stop an allocation the scheduler does not run. */
        public List<Ask> stops() {
            return asks.stream().filter(Ask::unknown).toList();
        }

        /** The asks for how one of the scheduler's own allocations stands. */
        public List<Ask> statusQueries() {
            return asks.stream().filter(a -> !a.unknown()).toList();
        }
    }

    /**
     * A command to send: a STOP for an allocation the scheduler does not run ({@code unknown}), or a
     * STATUS to ask the agent about one of the scheduler's own that it no longer reports.
     */
    public record Ask(String allocationId, String jobId, String tenant, String nodeId, List<Integer> gpuIndices,
            boolean unknown, String reason) {
    }

    public AllocationReconciler(long graceMillis) {
        if (graceMillis < 0) {
            throw new IllegalArgumentException("graceMillis must be >= 0, was " + graceMillis);
        }
        this.graceMillis = graceMillis;
    }

    /** Takes host {@code nodeId}'s report of what it runs at {@code atMillis}; an older report than the last is ignored. */
    public void report(String nodeId, long atMillis, List<AllocationReport> running) {
        HostReport last = reports.get(nodeId);
        if (last != null && last.atMillis() > atMillis) {
            return;
        }
        Map<String, AllocationReport> byId = new LinkedHashMap<>();
        running.forEach(r -> byId.put(r.allocationId(), r));
        reports.put(nodeId, new HostReport(atMillis, byId));
    }

    /**
     * One of the scheduler's allocations ended at {@code atMillis}: a host's report from before then (or
     * within the grace period after, the clocks and topics being what they are) may still list it, and
     * that is no sign of an allocation the scheduler does not know.
     */
    public void ended(String allocationId, long atMillis) {
        endedAt.remove(allocationId);
        endedAt.put(allocationId, atMillis);
    }

    /**
     * The host's agent refused {@code refused}'s START at {@code atMillis} because {@code holders} hold what it
     * asked for: they run there now, whatever this scheduler counted as ended. Returns the holds to take at once
     * (on the refused allocation's GPUs, one per holder the fleet does not hold already), so that nothing is
     * placed there again before the host's next report. From then on each is a foreign hold like any other: kept
     * while the host reports it, stopped after the grace, and given back once a report newer than the refusal
     * no longer lists it (or, on a host that does not report allocations, once the refusal is stale).
     */
    public List<Assignment> busy(Fleet fleet, Assignment refused, long atMillis, List<String> holders) {
        List<Assignment> holds = new ArrayList<>();
        for (String id : holders) {
            endedAt.remove(id); // its host runs it after the end this scheduler knew of: a report listing it is news
            if (fleet.assignment(id).isPresent()) {
                continue; // held already: the scheduler's own, or a hold taken from a report
            }
            Assignment a = new Assignment(id, "", "", 0, refused.nodeId(), refused.gpuIndices(),
                    refused.migProfile(), refused.migStart(), refused.milliGpu(), 0, 0);
            if (fleet.conflict(a) != null) {
                continue;
            }
            holds.add(a);
            foreign.put(id, a);
            heldSince.put(id, atMillis);
            unknownSince.putIfAbsent(id, atMillis);
        }
        return holds;
    }

    /** The host left: forget its reports and its foreign holds (the fleet dropped them with the host). */
    public void forgetHost(String nodeId) {
        reports.remove(nodeId);
        foreign.values().removeIf(a -> a.nodeId().equals(nodeId));
        heldSince.keySet().retainAll(foreign.keySet());
    }

    /** Holds this reconciler took for allocations that are not the scheduler's own. */
    public Set<String> foreignHolds() {
        return java.util.Collections.unmodifiableSet(foreign.keySet());
    }

    /**
     * Compares every host's latest report with the fleet's holds. {@code started} says whether one of
     * the scheduler's allocations is known to have started: those that are not, but that their host
     * reports, come back in the plan's {@code running}. {@code staleAfterMillis}: a report older than
     * this no longer keeps a foreign hold (the host has gone quiet; its liveness decides the rest).
     */
    public Plan reconcile(Fleet fleet, Predicate<String> started, long nowMillis, long staleAfterMillis) {
        List<Assignment> hold = new ArrayList<>();
        List<String> release = new ArrayList<>();
        List<Ask> stops = new ArrayList<>();
        List<String> conflicts = new ArrayList<>();
        List<AllocationReport> running = new ArrayList<>();
        Set<String> seenOwn = new HashSet<>();
        for (Map.Entry<String, HostReport> e : reports.entrySet()) {
            String nodeId = e.getKey();
            HostReport report = e.getValue();
            boolean stale = nowMillis - report.atMillis() > staleAfterMillis || fleet.node(nodeId).isEmpty();
            Map<String, Assignment> held = new HashMap<>();
            for (Assignment a : fleet.assignmentsOn(nodeId)) {
                held.put(a.allocationId(), a);
            }
            for (AllocationReport r : report.running().values()) {
                String id = r.allocationId();
                if (held.containsKey(id) && !foreign.containsKey(id)) {
                    seenOwn.add(id);
                    if (!stale && !started.test(id)) {
                        running.add(r);
                    }
                    continue;
                }
                Long ended = endedAt.get(id);
                if (stale || ended != null && report.atMillis() < ended + graceMillis) {
                    continue; // a report that predates the end the scheduler already knows of
                }
                if (!(foreign.containsKey(id) && fleet.assignment(id).isPresent())) {
                    // not held yet, or the fleet dropped the hold (the host's GPUs changed): hold it (again)
                    foreign.remove(id);
                    Assignment a = holdOf(nodeId, r);
                    String why = a == null ? "its GPUs are not described"
                            : fleet.assignment(id).isPresent() ? "the scheduler holds " + id + " on "
                                    + fleet.assignment(id).get().nodeId()
                            : fleet.conflict(a);
                    if (why == null) {
                        hold.add(a);
                        foreign.put(id, a);
                        heldSince.put(id, report.atMillis());
                    } else if (conflicted.add(id)) {
                        conflicts.add("host " + nodeId + " runs " + id + " (job " + r.jobId() + ") on GPUs "
                                + r.gpuIndices() + ", which this scheduler cannot hold: " + why);
                    }
                }
                long since = unknownSince.computeIfAbsent(id, k -> report.atMillis());
                if (report.atMillis() - since >= graceMillis && due(id, nowMillis)) {
                    stops.add(new Ask(id, r.jobId(), r.tenant(), nodeId, r.gpuIndices(), true,
                            "allocation " + id + " of job " + r.jobId() + " is not one this scheduler runs (reported by "
                                    + nodeId + " since " + Instant.ofEpochMilli(since) + ")"));
                    askedAt.put(id, nowMillis);
                }
            }
            // foreign holds the host no longer reports (or no longer credibly) are given back; a hold taken on
            // newer evidence (a refused start) waits for a report newer than that
            for (Assignment a : List.copyOf(foreign.values())) {
                long since = heldSince.getOrDefault(a.allocationId(), Long.MIN_VALUE);
                boolean gone = !report.running().containsKey(a.allocationId()) && report.atMillis() > since;
                if (a.nodeId().equals(nodeId) && (gone || stale && nowMillis - since > staleAfterMillis)) {
                    releaseForeign(a.allocationId(), release);
                }
            }
            if (stale) {
                continue;
            }
            for (Assignment a : held.values()) {
                String id = a.allocationId();
                if (foreign.containsKey(id) || report.running().containsKey(id)) {
                    continue;
                }
                long since = absentSince.computeIfAbsent(id, k -> report.atMillis());
                if (report.atMillis() - since >= graceMillis && due(id, nowMillis)) {
                    stops.add(new Ask(id, a.jobId(), a.tenant(), nodeId, a.gpuIndices(), false,
                            "host " + nodeId + " has not reported allocation " + id + " since "
                                    + Instant.ofEpochMilli(since) + "; asking its agent how it stands"));
                    askedAt.put(id, nowMillis);
                }
            }
        }
        // a refusal's hold on a host that has not reported since is given back once the refusal is stale
        for (Assignment a : List.copyOf(foreign.values())) {
            long since = heldSince.getOrDefault(a.allocationId(), Long.MIN_VALUE);
            if (!reports.containsKey(a.nodeId()) && nowMillis - since > staleAfterMillis) {
                releaseForeign(a.allocationId(), release);
            }
        }
        seenOwn.forEach(absentSince::remove);
        forgetEndsBefore(nowMillis - Math.max(staleAfterMillis, graceMillis) - graceMillis);
        // forget what concerns allocations the fleet no longer holds
        absentSince.keySet().removeIf(id -> fleet.assignment(id).isEmpty());
        askedAt.keySet().removeIf(id -> fleet.assignment(id).isEmpty() && !unknownSince.containsKey(id));
        unknownSince.keySet().removeIf(id -> !foreign.containsKey(id) && notReported(id));
        conflicted.removeIf(id -> !unknownSince.containsKey(id));
        return new Plan(hold, release, stops, conflicts, running);
    }

    /**
     * Ends older than {@code cutoffMillis} can no longer meet a report that predates them. A pass prunes them
     * itself; a standby, which learns of ends without running passes, calls this.
     */
    public void forgetEndsBefore(long cutoffMillis) {
        var it = endedAt.entrySet().iterator();
        while (it.hasNext() && it.next().getValue() < cutoffMillis) {
            it.remove();
        }
    }

    private void releaseForeign(String allocationId, List<String> release) {
        release.add(allocationId);
        foreign.remove(allocationId);
        heldSince.remove(allocationId);
        unknownSince.remove(allocationId);
        askedAt.remove(allocationId);
    }

    private boolean due(String allocationId, long nowMillis) {
        Long asked = askedAt.get(allocationId);
        return asked == null || nowMillis - asked >= Math.max(graceMillis, 1);
    }

    private boolean notReported(String allocationId) {
        for (HostReport r : reports.values()) {
            if (r.running().containsKey(allocationId)) {
                return false;
            }
        }
        return true;
    }

    /** The hold a reported allocation takes: its MIG slot, its fraction, or its whole GPUs. */
    static Assignment holdOf(String nodeId, AllocationReport r) {
        if (r.gpuIndices().isEmpty()) {
            return null;
        }
        if (r.migInstanceUuid() != null) {
            var slot = NodeCommand.MigSlot.parse(r.migSlot());
            if (slot.isEmpty()) {
                return null;
            }
            return new Assignment(r.allocationId(), r.jobId(), r.tenant(), 0, nodeId, List.of(r.gpuIndices().get(0)),
                    slot.get().profile(), slot.get().start(), 0, 0, 0);
        }
        int milli = r.milliGpu() > 0 && r.milliGpu() < 1000 && r.gpuIndices().size() == 1 ? r.milliGpu() : 1000;
        return new Assignment(r.allocationId(), r.jobId(), r.tenant(), 0, nodeId, r.gpuIndices(), null, -1, milli, 0,
                0);
    }
}
