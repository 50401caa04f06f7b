package dev.gpucloud.scheduler.service.persistence;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** An operator's cordon (or drain) of a host: no new work lands on it until it is lifted. */
@Entity
@Table(name = "host_cordons")
public class HostCordonEntity {
    @Id
    @Column(name = "node_id")
    public String nodeId;
    /** True for a drain (its jobs were asked to move), false for a plain cordon. */
    public boolean drained;
    public String reason;
    /** Who cordoned it: the token's subject. */
    @Column(name = "by_subject")
    public String bySubject;
    public Instant since;
}
