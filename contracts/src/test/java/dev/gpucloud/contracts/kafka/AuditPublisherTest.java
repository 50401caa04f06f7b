package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.Samples;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class AuditPublisherTest {

    final List<String> warnings = new ArrayList<>();

    @Test
    void a_record_goes_to_audit_events_with_its_tenant_as_key_and_the_service_as_source() {
        List<ProducerRecord<String, byte[]>> sent = new ArrayList<>();
        AuditPublisher publisher = new AuditPublisher(r -> {
            sent.add(r);
            return CompletableFuture.completedFuture(null);
        }, "scheduler-service", (format, args) -> warnings.add(String.format(format, args)));
        publisher.record(Samples.auditEvent());
        assertThat(sent).singleElement().satisfies(r -> {
            assertThat(r.topic()).isEqualTo("audit.events");
            assertThat(r.key()).isEqualTo(Samples.auditEvent().key());
            assertThat(new String(r.headers().lastHeader("ce_source").value())).isEqualTo("scheduler-service");
        });
        assertThat(warnings).isEmpty();
        assertThat(publisher.dropped()).isZero();
    }

    @Test
    void a_full_buffer_or_a_refusing_broker_is_counted_and_said_never_thrown() {
        AuditPublisher full = new AuditPublisher(r -> {
            throw new IllegalStateException("buffer full");
        }, "billing-service", (format, args) -> warnings.add(String.format(format, args)));
        full.record(Samples.auditEvent());
        AuditPublisher refused = new AuditPublisher(r -> CompletableFuture.failedFuture(
                new IllegalStateException("not authorized")), "billing-service",
                (format, args) -> warnings.add(String.format(format, args)));
        refused.record(Samples.auditEvent());
        refused.record(Samples.auditEvent());
        assertThat(full.dropped()).isEqualTo(1);
        assertThat(refused.dropped()).isEqualTo(2);
        assertThat(warnings).hasSize(3).allSatisfy(w -> assertThat(w).startsWith("audit: a record of "))
                .anySatisfy(w -> assertThat(w).contains("(1 so far): buffer full"))
                .anySatisfy(w -> assertThat(w).contains("(2 so far): not authorized"));
    }
}
