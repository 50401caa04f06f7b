package dev.gpucloud.contracts.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.io.IOException;
import java.util.stream.Collectors;

/**
 * JSON for event payloads. Unknown fields are ignored (producers may be newer than consumers);
 * a missing required field or a value out of range is a {@link MalformedEventException} whose
 * message names the topic and the field. Times are ISO-8601 text in UTC.
 */
public final class EventCodec {

    /** Records above this size are refused before parsing. */
    public static final int MAX_RECORD_BYTES = (int) Limits.RECORD.max();

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            // "workers": 1.5 is not one worker: a fraction where an integer belongs is refused, not truncated
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .build();

    static {
        MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
                .maxNestingDepth(64)
                .maxStringLength(64 * 1024)
                .maxNumberLength(64)
                .build());
    }

    private EventCodec() {
    }

    public static byte[] encode(Object payload) {
        try {
            return MAPPER.writeValueAsBytes(payload);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + payload.getClass().getSimpleName(), e);
        }
    }

    public static String encodeToString(Object payload) {
        try {
            return MAPPER.writeValueAsString(payload);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + payload.getClass().getSimpleName(), e);
        }
    }

    /** Decodes one record's value for a topic; null stays null (a tombstone). */
    public static <T> T decode(Topic<T> topic, byte[] value) {
        return decode(topic.name(), topic.payloadType(), value);
    }

    public static <T> T decode(String where, Class<T> type, byte[] value) {
        if (value == null) {
            return null;
        }
        if (value.length > MAX_RECORD_BYTES) {
            throw new MalformedEventException(where + ": record of " + value.length
                    + " bytes is over the limit of " + MAX_RECORD_BYTES);
        }
        try {
            T decoded = MAPPER.readValue(value, type);
            if (decoded == null) {
                throw new MalformedEventException(where + ": value is JSON null, expected a " + type.getSimpleName());
            }
            return decoded;
        } catch (MalformedEventException e) {
            throw e;
        } catch (ValueInstantiationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new MalformedEventException(where + ": " + Check.reason(cause.getMessage()) + path(e), e);
        } catch (JsonMappingException e) {
            // Jackson quotes the offending value whole: clipped, so a reason never carries a megabyte
            throw new MalformedEventException(where + ": " + Check.reason(e.getOriginalMessage()) + path(e), e);
        } catch (JsonProcessingException e) {
            // the original message: without the location, which quotes the input
            throw new MalformedEventException(where + ": not valid JSON: " + Check.clip(e.getOriginalMessage()), e);
        } catch (IOException e) {
            throw new MalformedEventException(where + ": not valid JSON: " + Check.clip(e.getMessage()), e);
        }
    }

    private static String path(JsonMappingException e) {
        if (e.getPath().isEmpty()) {
            return "";
        }
        return " (at " + e.getPath().stream()
                .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                .collect(Collectors.joining(".")) + ")";
    }

    /** The shared mapper, configured as above, for adapters that need one. */
    public static ObjectMapper mapper() {
        return MAPPER;
    }
}
