package dev.gpucloud.scheduler.service.persistence;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;

/** A checkpoint a job's worker reported saving. */
@Entity
@Table(name = "checkpoints")
@IdClass(CheckpointEntity.Key.class)
public class CheckpointEntity {
    @Id
    @Column(name = "job_id")
    public String jobId;
    @Id
    public String path;
    @Column(name = "allocation_id")
    public String allocationId;
    @Column(name = "saved_at")
    public Instant savedAt;

    /** The composite key (job, path). */
    public static class Key implements Serializable {
        public String jobId;
        public String path;

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(jobId, k.jobId) && Objects.equals(path, k.path);
        }

        @Override
        public int hashCode() {
            return Objects.hash(jobId, path);
        }
    }
}
