package dev.gpucloud.scheduler.service.persistence;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.JobState;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A job row: the spec as submitted (JSON of JobSpec) and its lifecycle state. */
@Entity
@Table(name = "jobs")
public class JobEntity {
    @Id
    public String id;
    public String tenant;
    @Column(name = "client_request_id")
    public String clientRequestId;
    public String name;
    @Column(name = "spec_json")
    public String specJson;
    public int priority;
    @Enumerated(EnumType.STRING)
    public JobState state;
    public String reason = "";
    @Column(name = "resume_from")
    public String resumeFrom;
    @Column(name = "exit_code")
    public Integer exitCode;
    public int attempt;
    @Column(name = "submitted_at")
    public Instant submittedAt;
    @Column(name = "updated_at")
    public Instant updatedAt;
    public int interruptions;
    public int failures;
    @Column(name = "lost_work_seconds")
    public long lostWorkSeconds;
    @Column(name = "lost_gpu_seconds")
    public long lostGpuSeconds;
    @Column(name = "last_checkpoint_at")
    public Instant lastCheckpointAt;
    @Column(name = "running_since")
    public Instant runningSince;
    @Column(name = "attained_gpu_seconds")
    public long attainedGpuSeconds;
    @Column(name = "requeued_at")
    public Instant requeuedAt;
    /** The W3C traceparent of the span that accepted the job: what its later spans continue. Null: untraced. */
    public String traceparent;
    /** The capacity the next placement asks for, when it differs from the spec's (spot fallback). */
    @Enumerated(EnumType.STRING)
    public CapacityPreference capacity;
    /** Set while the job is asked to checkpoint and then stop: why, by when, and for which job (or null). */
    @Column(name = "stop_reason")
    public String stopReason;
    @Column(name = "stop_deadline")
    public Instant stopDeadline;
    @Column(name = "stop_preemptor")
    public String stopPreemptor;
    /** Whether that stop ends the job (its time limit) rather than requeueing it. */
    @Column(name = "stop_ends")
    public boolean stopEnds;
    /** The running time its ended attempts used, which its time limit bounds. */
    @Column(name = "ran_millis")
    public long ranMillis;
    /** The array the job is an element of, and its index there; both null for a job of its own. */
    @Column(name = "array_id")
    public String arrayId;
    @Column(name = "array_index")
    public Integer arrayIndex;
}
