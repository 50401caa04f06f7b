package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.lifecycle.GangSettlement;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.HostCordonEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * What a takeover and a following standby read back from PostgreSQL, each as of one snapshot: every open
 * row ({@link OpenWork}), or the rows written since an earlier snapshot ({@link Changed}, migration V7's
 * {@code change_xid}). Reads only; the engine replays what they return.
 */
final class StateReads {

    private final Mutiny.SessionFactory sessions;
    /** How far back ended allocations are read (see {@code SchedulerEngine.recentEnds}). */
    private final Duration recentEnds;

    StateReads(Mutiny.SessionFactory sessions, Duration recentEnds) {
        this.sessions = sessions;
        this.recentEnds = recentEnds;
    }

    /** Rows written by transactions the snapshot {@code since} could not see, with what their replay needs. */
    record Changed(String snapshot, List<AllocationEntity> allocations, List<JobEntity> jobs,
            Map<String, List<AllocationEntity>> heldByJob, Map<String, String> tenants) {
    }

    Uni<Changed> readChangedSince(String since) {
        String changed = " where change_xid >= pg_snapshot_xmin(cast(?1 as pg_snapshot))"
                + " and not pg_visible_in_snapshot(change_xid, cast(?1 as pg_snapshot))";
        return snapshotRead((s, snapshot) -> s.createNativeQuery("select * from allocations" + changed,
                                AllocationEntity.class).setParameter(1, since).getResultList()
                .chain(allocs -> s.createNativeQuery("select * from jobs" + changed, JobEntity.class)
                        .setParameter(1, since).getResultList()
                        .chain(jobs -> {
                            Map<String, String> tenants = new HashMap<>();
                            jobs.forEach(j -> tenants.put(j.id, j.tenant));
                            List<String> placed = jobs.stream().filter(j -> GangSettlement.placed(j.state))
                                    .map(j -> j.id).toList();
                            List<String> unnamed = allocs.stream().map(a -> a.jobId)
                                    .filter(id -> !tenants.containsKey(id)).distinct().toList();
                            Uni<List<AllocationEntity>> held = placed.isEmpty() ? Uni.createFrom().item(List.of())
                                    : s.createSelectionQuery("from AllocationEntity where jobId in :ids"
                                                    + " and state in ('STARTING', 'RUNNING')", AllocationEntity.class)
                                            .setParameter("ids", placed).getResultList();
                            Uni<List<JobEntity>> owners = unnamed.isEmpty() ? Uni.createFrom().item(List.of())
                                    : s.createSelectionQuery("from JobEntity where id in :ids", JobEntity.class)
                                            .setParameter("ids", unnamed).getResultList();
                            return held.chain(h -> owners.map(o -> {
                                o.forEach(j -> tenants.put(j.id, j.tenant));
                                Map<String, List<AllocationEntity>> byJob = new HashMap<>();
                                h.forEach(a -> byJob.computeIfAbsent(a.jobId, k -> new ArrayList<>()).add(a));
                                return new Changed(snapshot, allocs, jobs, byJob, tenants);
                            }));
                        })));
    }

    /** The operators' cordons (migration V9), by host id, with their reasons: a handful of rows, read whole. */
    Uni<Map<String, String>> readCordons() {
        return sessions.withSession(s -> s.createSelectionQuery("from HostCordonEntity", HostCordonEntity.class)
                .getResultList().map(rows -> {
                    Map<String, String> cordons = new HashMap<>();
                    rows.forEach(r -> cordons.put(r.nodeId, r.reason));
                    return cordons;
                }));
    }

    /**
     * Runs {@code read} in a read-only REPEATABLE READ transaction, with the snapshot all its queries see (as
     * text): rows written after it are exactly those {@code pg_visible_in_snapshot} says it cannot see.
     */
    <T> Uni<T> snapshotRead(java.util.function.BiFunction<Mutiny.Session, String, Uni<T>> read) {
        return sessions.withTransaction(s -> s.createNativeQuery("set transaction isolation level repeatable read,"
                        + " read only").executeUpdate()
                .chain(() -> s.createNativeQuery("select cast(pg_current_snapshot() as text)", String.class)
                        .getSingleResult())
                .chain(snapshot -> read.apply(s, snapshot)));
    }

    /**
     * What a takeover or a standby's first read starts from: the allocations that hold GPUs and the jobs not
     * ended (in submission order), as of one snapshot.
     */
    record OpenWork(String snapshot, List<AllocationEntity> held, List<JobEntity> jobs,
            List<AllocationEntity> ended) {
    }

    Uni<OpenWork> readOpenWork() {
        return snapshotRead((s, snapshot) -> s.createSelectionQuery(
                        "from AllocationEntity where state in ('STARTING', 'RUNNING')", AllocationEntity.class)
                .getResultList()
                .flatMap(held -> s.createSelectionQuery(
                                "from JobEntity where state not in :done order by submittedAt, id", JobEntity.class)
                        .setParameter("done", List.of(JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED))
                        .getResultList()
                        .chain(jobs -> s.createSelectionQuery("from AllocationEntity where endedAt > :since",
                                        AllocationEntity.class)
                                .setParameter("since", Instant.now().minus(recentEnds))
                                .getResultList()
                                .map(ended -> new OpenWork(snapshot, held, jobs, ended)))));
    }
}
