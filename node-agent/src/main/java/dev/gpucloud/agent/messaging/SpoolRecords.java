package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.spool.SpooledRecord;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/** Converts between Kafka producer records and the spool's records: topic, key, headers and value, unchanged. */
public final class SpoolRecords {

    private SpoolRecords() {
    }

    public static SpooledRecord spooled(ProducerRecord<String, byte[]> record) {
        Map<String, byte[]> headers = new LinkedHashMap<>();
        for (Header header : record.headers()) {
            headers.put(header.key(), header.value());
        }
        return new SpooledRecord(record.topic(), record.key(), headers, record.value());
    }

    public static ProducerRecord<String, byte[]> producerRecord(SpooledRecord record) {
        ProducerRecord<String, byte[]> out = new ProducerRecord<>(record.topic(), record.key(), record.value());
        record.headers().forEach((name, value) -> out.headers().add(name, value));
        return out;
    }
}
