package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.viewOf;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * What the API reads about jobs, straight from the database: one job, or a page of them. Reads need no
 * lead and no turn on the engine's executor, so a standby answers them too, and they never wait behind
 * a scheduling pass.
 */
@ApplicationScoped
public class JobQueries {

    private final Mutiny.SessionFactory sessions;

    public JobQueries(Mutiny.SessionFactory sessions) {
        this.sessions = sessions;
    }

    /** The job with its current attempt's workers; fails with {@link JobNotFoundException}. */
    public Uni<JobView> get(String jobId) {
        return sessions.withSession(s -> s.find(JobEntity.class, jobId).flatMap(job -> {
            if (job == null) {
                return Uni.createFrom().failure(new JobNotFoundException(jobId));
            }
            return s.createSelectionQuery("from AllocationEntity where jobId = :j and attempt = :a order by rank",
                            AllocationEntity.class)
                    .setParameter("j", job.id).setParameter("a", job.attempt).getResultList()
                    .map(allocs -> viewOf(job, allocs));
        }));
    }

    /** One worker a job has had, in any attempt: its allocation, host and rank. */
    public record Worker(String allocationId, String nodeId, int rank) {
    }

    /** Every worker the job has had, in every attempt, by allocation id. */
    public Uni<Map<String, Worker>> workersEver(String jobId) {
        return sessions.withSession(s -> s.createSelectionQuery("from AllocationEntity where jobId = :j",
                AllocationEntity.class).setParameter("j", jobId).getResultList().map(rows -> {
                    Map<String, Worker> workers = new HashMap<>();
                    rows.forEach(a -> workers.put(a.id, new Worker(a.id, a.nodeId, a.rank)));
                    return workers;
                }));
    }

    /** A page of an array's elements, by index, after {@code afterIndex} (null: from the first). */
    public Uni<List<JobView>> listArray(String tenant, String arrayId, List<JobState> states, int limit,
            Integer afterIndex) {
        Map<String, Object> params = new HashMap<>();
        StringBuilder hql = filtered("arrayId = :array", tenant, states, params);
        params.put("array", arrayId);
        if (afterIndex != null) {
            hql.append(" and arrayIndex > :after");
            params.put("after", afterIndex);
        }
        hql.append(" order by arrayIndex");
        return page(hql.toString(), params, limit);
    }

    /** A page of jobs, newest first, after the (submittedAt, id) of the previous page's last job. */
    public Uni<List<JobView>> list(String tenant, List<JobState> states, int limit, Instant afterTime, String afterId) {
        Map<String, Object> params = new HashMap<>();
        StringBuilder hql = filtered("1 = 1", tenant, states, params);
        if (afterTime != null) {
            hql.append(" and (submittedAt < :at or (submittedAt = :at and id < :aid))");
            params.put("at", afterTime);
            params.put("aid", afterId);
        }
        hql.append(" order by submittedAt desc, id desc");
        return page(hql.toString(), params, limit);
    }

    /** {@code from JobEntity where <where>}, and the tenant (unless empty: any) and states (unless empty: any). */
    private static StringBuilder filtered(String where, String tenant, List<JobState> states,
            Map<String, Object> params) {
        StringBuilder hql = new StringBuilder("from JobEntity where ").append(where);
        if (tenant != null && !tenant.isEmpty()) {
            hql.append(" and tenant = :tenant");
            params.put("tenant", tenant);
        }
        if (!states.isEmpty()) {
            hql.append(" and state in :states");
            params.put("states", states);
        }
        return hql;
    }

    private Uni<List<JobView>> page(String hql, Map<String, Object> params, int limit) {
        return sessions.withSession(s -> {
            var query = s.createSelectionQuery(hql, JobEntity.class).setMaxResults(limit);
            params.forEach(query::setParameter);
            // One session runs one statement at a time: fetch every listed job's allocations at once.
            return query.getResultList().flatMap(jobs -> jobs.isEmpty() ? Uni.createFrom().item(List.<JobView>of())
                    : s.createSelectionQuery("from AllocationEntity where jobId in :ids order by rank",
                                    AllocationEntity.class)
                            .setParameter("ids", jobs.stream().map(j -> j.id).toList())
                            .getResultList()
                            .map(allocs -> jobs.stream().map(j -> viewOf(j, allocs.stream()
                                    .filter(a -> a.jobId.equals(j.id) && a.attempt == j.attempt).toList())).toList()));
        });
    }
}
