package dev.gpucloud.scheduler.service.persistence;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;

/** One worker's report that it saved a checkpoint; a gang's checkpoint is complete when all its workers have. */
@Entity
@Table(name = "checkpoint_reports")
@IdClass(CheckpointReportEntity.Key.class)
public class CheckpointReportEntity {
    @Id
    @Column(name = "job_id")
    public String jobId;
    @Id
    public String path;
    @Id
    @Column(name = "allocation_id")
    public String allocationId;
    @Column(name = "saved_at")
    public Instant savedAt;

    /** The composite key (job, path, allocation). */
    public static class Key implements Serializable {
        public String jobId;
        public String path;
        public String allocationId;

        public Key() {
        }

        public Key(String jobId, String path, String allocationId) {
            this.jobId = jobId;
            this.path = path;
            this.allocationId = allocationId;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(jobId, k.jobId) && Objects.equals(path, k.path)
                    && Objects.equals(allocationId, k.allocationId);
        }

        @Override
        public int hashCode() {
            return Objects.hash(jobId, path, allocationId);
        }
    }
}
