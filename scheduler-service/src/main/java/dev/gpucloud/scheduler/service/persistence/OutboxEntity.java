package dev.gpucloud.scheduler.service.persistence;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;
import java.time.Instant;

/** A record waiting to be published; written in the transaction of the change it announces. */
@Entity
@Table(name = "outbox")
public class OutboxEntity {
    @Id
    // from outbox_id_seq in blocks of 50 (V4): ids still grow in the order rows are added, and a
    // transaction's rows go to the database in batches rather than one insert each
    @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "outbox_ids")
    @SequenceGenerator(name = "outbox_ids", sequenceName = "outbox_id_seq", allocationSize = 50)
    public Long id;
    public String topic;
    @Column(name = "record_key")
    public String recordKey;
    public byte[] payload;
    @Column(name = "ce_id")
    public String ceId;
    @Column(name = "ce_type")
    public String ceType;
    @Column(name = "ce_time")
    public Instant ceTime;
    /** The span the record is published under, as a W3C traceparent; null for a record outside any job's trace. */
    public String traceparent;
}
