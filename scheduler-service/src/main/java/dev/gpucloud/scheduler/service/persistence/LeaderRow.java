package dev.gpucloud.scheduler.service.persistence;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.hibernate.annotations.Immutable;

/**
 * The leader lease's row, read-only, so that the epoch checks in every transaction are queries Hibernate
 * plans once. As native queries with a result type, each call was planned anew and stored under the same
 * hash: the plan cache filled with copies of them (evicting the plans of the real queries), and every lookup
 * compared its way through them (docs/benchmarks.md). Leadership writes the row through the SQL client.
 */
@Entity
@Immutable
@Table(name = "scheduler_leader")
public class LeaderRow {
    @Id
    public Integer id;
    public long epoch;
}
