package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.Samples;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class EventRecordsTest {

    @Test
    void record_carries_cloudevents_binary_headers_and_decodes_back() {
        ProducerRecord<String, byte[]> out = EventRecords.record(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent(),
                "node-agent/node-a100-1");

        assertThat(out.topic()).isEqualTo("usage.events");
        assertThat(header(out, "ce_specversion")).isEqualTo("1.0");
        assertThat(header(out, "ce_type")).isEqualTo("dev.gpucloud.usage.v1");
        assertThat(header(out, "ce_source")).isEqualTo("node-agent/node-a100-1");
        assertThat(header(out, "ce_id")).isNotBlank();

        Envelope<UsageEvent> in = EventRecords.decode(Topics.USAGE_EVENTS, consumed(out));
        assertThat(in.payload()).isEqualTo(Samples.usageEvent());
        assertThat(in.event().id()).isEqualTo(header(out, "ce_id"));
        assertThat(in.key()).isEqualTo("alloc-1");
    }

    @Test
    void every_event_gets_its_own_id() {
        var a = EventRecords.record(Topics.USAGE_EVENTS, "k", Samples.usageEvent(), "s");
        var b = EventRecords.record(Topics.USAGE_EVENTS, "k", Samples.usageEvent(), "s");

        assertThat(header(a, "ce_id")).isNotEqualTo(header(b, "ce_id"));
    }

    @Test
    void record_without_ce_id_is_rejected_naming_the_header() {
        ProducerRecord<String, byte[]> out = EventRecords.record(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent(), "s");
        out.headers().remove("ce_id");

        assertThatThrownBy(() -> EventRecords.decode(Topics.USAGE_EVENTS, consumed(out)))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("ce_id");
    }

    @Test
    void record_without_key_is_rejected() {
        ProducerRecord<String, byte[]> out = EventRecords.record(Topics.USAGE_EVENTS, null, Samples.usageEvent(), "s");

        assertThatThrownBy(() -> EventRecords.decode(Topics.USAGE_EVENTS, consumed(out)))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("no key");
    }

    @Test
    void tombstone_decodes_with_null_payload() {
        ProducerRecord<String, byte[]> out = EventRecords.tombstone(Topics.GPU_INVENTORY, "node-1", "s");

        assertThat(EventRecords.decode(Topics.GPU_INVENTORY, consumed(out)).isTombstone()).isTrue();
    }

    private static ConsumerRecord<String, byte[]> consumed(ProducerRecord<String, byte[]> out) {
        ConsumerRecord<String, byte[]> in = new ConsumerRecord<>(out.topic(), 0, 0L, out.key(), out.value());
        out.headers().forEach(h -> in.headers().add(h));
        return in;
    }

    private static String header(ProducerRecord<String, byte[]> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    @org.junit.jupiter.api.Test
    void a_dead_letter_keeps_the_record_and_says_why_and_where_it_came_from() {
        ProducerRecord<String, byte[]> sent = EventRecords.record(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent(),
                "test");
        ConsumerRecord<String, byte[]> consumed = new ConsumerRecord<>(sent.topic(), 4, 17L, sent.key(), sent.value());
        sent.headers().forEach(h -> consumed.headers().add(h));
        ProducerRecord<String, byte[]> dead = EventRecords.deadLetter(consumed, "usage.events.dlq", "field 'to' broken");
        assertThat(dead.topic()).isEqualTo("usage.events.dlq");
        assertThat(dead.key()).isEqualTo("alloc-1");
        assertThat(dead.value()).isEqualTo(sent.value());
        assertThat(new String(dead.headers().lastHeader("dead-letter-reason").value(), StandardCharsets.UTF_8))
                .isEqualTo("field 'to' broken");
        assertThat(new String(dead.headers().lastHeader("dead-letter-partition").value(), StandardCharsets.UTF_8))
                .isEqualTo("4");
        assertThat(new String(dead.headers().lastHeader("dead-letter-offset").value(), StandardCharsets.UTF_8))
                .isEqualTo("17");
        assertThat(dead.headers().lastHeader("ce_id").value()).isEqualTo(sent.headers().lastHeader("ce_id").value());
    }
}
