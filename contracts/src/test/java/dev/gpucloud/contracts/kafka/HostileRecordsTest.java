package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.Samples;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import java.nio.charset.StandardCharsets;
import org.assertj.core.api.AbstractThrowableAssert;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

/** Records a hostile or broken producer could write: each is refused with a reason naming topic and field. */
class HostileRecordsTest {

    private static final Instant NOW = Instant.now();

    @Test
    void a_record_of_another_ce_type_is_refused() {
        ProducerRecord<String, byte[]> out = EventRecords.record(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent(),
                "s");
        out.headers().remove(CloudEventHeaders.TYPE).add(CloudEventHeaders.TYPE, utf8("dev.gpucloud.job.request.v1"));

        assertThatThrownBy(() -> EventRecords.decode(Topics.USAGE_EVENTS, consumed(out), NOW))
                .isInstanceOf(MalformedEventException.class)
                .hasMessage("usage.events: header 'ce_type' must be 'dev.gpucloud.usage.v1', was "
                        + "'dev.gpucloud.job.request.v1'");
    }

    @Test
    void a_fraction_of_a_worker_is_refused_not_truncated() {
        String json = json(Topics.JOB_REQUESTS, "acme", Samples.jobRequest())
                .replace("\"workers\":1,", "\"workers\":1.5,");
        decoding(Topics.JOB_REQUESTS, "acme", json)
                .hasMessageContaining("job.requests").hasMessageContaining("1.5")
                .hasMessageContaining("workers");
    }

    @Test
    void usage_a_billion_years_ahead_is_refused_naming_the_field() {
        String json = json(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent())
                .replaceFirst("\"from\":\"[^\"]+\"", "\"from\":\"+1000000000-12-31T00:00:00Z\"")
                .replaceFirst("\"to\":\"[^\"]+\"", "\"to\":\"+1000000000-12-31T00:01:00Z\"");
        decoding(Topics.USAGE_EVENTS, "alloc-1", json)
                .hasMessageStartingWith("usage.events: field 'from' must be within 2020-01-01T00:00:00Z");
    }

    @Test
    void an_empty_program_is_refused() {
        String json = json(Topics.JOB_REQUESTS, "acme", Samples.jobRequest())
                .replaceFirst("\"command\":\\[[^\\]]*\\]", "\"command\":[\"\"]");
        decoding(Topics.JOB_REQUESTS, "acme", json)
                .hasMessageContaining("field 'spec.command[0]' (the program) must not be blank");
    }

    @Test
    void a_deadline_in_1970_is_refused() {
        String json = json(Topics.JOB_REQUESTS, "acme", Samples.jobRequest())
                .replace("\"deadline\":null", "\"deadline\":\"1970-01-01T00:00:01Z\"");
        decoding(Topics.JOB_REQUESTS, "acme", json)
                .hasMessageContaining("field 'spec.deadline' must be within 2020-01-01T00:00:00Z");
    }

    @Test
    void a_nul_byte_in_an_id_is_refused_before_any_database_sees_it() {
        String json = json(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent())
                .replaceFirst("\"jobId\":\"[^\"]+\"", "\"jobId\":\"job-\\\\u0000-1\"");
        decoding(Topics.USAGE_EVENTS, "alloc-1", json)
                .hasMessageContaining("field 'jobId' must not contain a NUL character");
    }

    @Test
    void invalid_utf8_is_malformed_json() {
        byte[] bad = {'{', '"', 'a', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        ProducerRecord<String, byte[]> out = EventRecords.record(Topics.USAGE_EVENTS, "alloc-1", Samples.usageEvent(),
                "s");
        ProducerRecord<String, byte[]> broken = new ProducerRecord<>(out.topic(), null, out.key(), bad, out.headers());

        assertThatThrownBy(() -> EventRecords.decode(Topics.USAGE_EVENTS, consumed(broken), NOW))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageStartingWith("usage.events: not valid JSON");
    }

    /** What decoding this JSON as a record of the topic throws. */
    private static AbstractThrowableAssert<?, ? extends Throwable> decoding(Topic<?> topic, String key, String json) {
        return assertThatThrownBy(() -> EventRecords.decode(topic,
                consumed(withValue(topic.name(), key, json, topic.eventType())), NOW))
                .isInstanceOf(MalformedEventException.class);
    }

    /** The JSON a producer would write for this payload, to tamper with. */
    private static <T> String json(Topic<T> topic, String key, T payload) {
        return new String(EventRecords.record(topic, key, payload, "s").value(), StandardCharsets.UTF_8);
    }

    private static ProducerRecord<String, byte[]> withValue(String topic, String key, String json, String type) {
        ProducerRecord<String, byte[]> out = new ProducerRecord<>(topic, key, json.getBytes(StandardCharsets.UTF_8));
        out.headers().add(new RecordHeader(CloudEventHeaders.ID, utf8("id-1")));
        out.headers().add(new RecordHeader(CloudEventHeaders.TYPE, utf8(type)));
        out.headers().add(new RecordHeader(CloudEventHeaders.SOURCE, utf8("test")));
        out.headers().add(new RecordHeader(CloudEventHeaders.TIME, utf8(NOW.toString())));
        return out;
    }

    private static ConsumerRecord<String, byte[]> consumed(ProducerRecord<String, byte[]> out) {
        ConsumerRecord<String, byte[]> in = new ConsumerRecord<>(out.topic(), 0, 0L, out.key(), out.value());
        out.headers().forEach(h -> in.headers().add(h));
        return in;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
