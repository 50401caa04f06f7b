package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.MalformedEventException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** CloudEvents 1.0 Kafka binary mode: the attributes as {@code ce_*} headers, the payload as the value. */
public final class CloudEventHeaders {

    public static final String ID = "ce_id";
    public static final String TYPE = "ce_type";
    public static final String SOURCE = "ce_source";
    public static final String TIME = "ce_time";
    public static final String SPEC_VERSION = "ce_specversion";
    public static final String CONTENT_TYPE = "content-type";

    private CloudEventHeaders() {
    }

    public static void write(Headers headers, CloudEvent event) {
        headers.remove(ID).remove(TYPE).remove(SOURCE).remove(TIME).remove(SPEC_VERSION).remove(CONTENT_TYPE);
        headers.add(SPEC_VERSION, bytes(CloudEvent.SPEC_VERSION));
        headers.add(ID, bytes(event.id()));
        headers.add(TYPE, bytes(event.type()));
        headers.add(SOURCE, bytes(event.source()));
        headers.add(TIME, bytes(event.time().toString()));
        headers.add(CONTENT_TYPE, bytes("application/json"));
    }

    /** Reads the attributes; a missing or malformed one is a {@link MalformedEventException} naming it. */
    public static CloudEvent read(Headers headers) {
        String id = text(headers, ID);
        String type = text(headers, TYPE);
        String source = text(headers, SOURCE);
        String time = text(headers, TIME);
        try {
            return new CloudEvent(id, type, source, Instant.parse(time));
        } catch (DateTimeParseException e) {
            throw new MalformedEventException("header '" + TIME + "' is not an ISO-8601 time: " + time);
        } catch (IllegalArgumentException e) {
            throw new MalformedEventException("header " + e.getMessage());
        }
    }

    /** One header as text; a missing one is a {@link MalformedEventException} naming it. */
    public static String text(Headers headers, String name) {
        Header header = headers.lastHeader(name);
        if (header == null || header.value() == null) {
            throw new MalformedEventException("missing required header '" + name + "'");
        }
        return new String(header.value(), StandardCharsets.UTF_8);
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
