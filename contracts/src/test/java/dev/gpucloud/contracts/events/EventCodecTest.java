package dev.gpucloud.contracts.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class EventCodecTest {

    static Stream<Arguments> topics() {
        return Samples.perTopic().stream().map(a -> Arguments.of(a[0], a[1], a[2]));
    }

    @ParameterizedTest(name = "{0} round-trips")
    @MethodSource("topics")
    void payload_round_trips_unchanged(Topic<Object> topic, Object payload, String requiredField) {
        byte[] json = EventCodec.encode(payload);

        assertThat(EventCodec.decode(topic, json)).isEqualTo(payload);
    }

    @ParameterizedTest(name = "{0} tolerates an unknown field")
    @MethodSource("topics")
    void unknown_field_is_ignored(Topic<Object> topic, Object payload, String requiredField) throws Exception {
        ObjectNode tree = EventCodec.mapper().valueToTree(payload);
        tree.put("addedByANewerProducer", "whatever");
        tree.putObject("nestedNewThing").put("x", 1);

        Object decoded = EventCodec.decode(topic, EventCodec.mapper().writeValueAsBytes(tree));

        assertThat(decoded).isEqualTo(payload);
    }

    @ParameterizedTest(name = "{0} rejects a record without {2}")
    @MethodSource("topics")
    void missing_required_field_is_rejected_by_name(Topic<Object> topic, Object payload, String requiredField)
            throws Exception {
        ObjectNode tree = EventCodec.mapper().valueToTree(payload);
        tree.remove(requiredField);
        byte[] json = EventCodec.mapper().writeValueAsBytes(tree);

        assertThatThrownBy(() -> EventCodec.decode(topic, json))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining(topic.name())
                .hasMessageContaining("'" + requiredField + "'");
    }

    @ParameterizedTest(name = "{0} rejects text that is not JSON")
    @MethodSource("topics")
    void garbage_is_rejected(Topic<Object> topic, Object payload, String requiredField) {
        assertThatThrownBy(() -> EventCodec.decode(topic, "{\"nodeId\": ".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining(topic.name());
        assertThatThrownBy(() -> EventCodec.decode(topic, "null".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MalformedEventException.class);
        assertThatThrownBy(() -> EventCodec.decode(topic, "[1,2]".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MalformedEventException.class);
    }

    @Test
    void wrong_type_names_the_field() {
        String json = EventCodec.encodeToString(Samples.usageEvent()).replace("\"units\":2", "\"units\":\"two\"");

        assertThatThrownBy(() -> EventCodec.decode(Topics.USAGE_EVENTS, json.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("units");
    }

    @Test
    void interval_that_ends_before_it_starts_is_rejected() {
        String json = EventCodec.encodeToString(Samples.usageEvent())
                .replace("2026-12-01T10:00:30Z", "2026-12-01T09:00:00Z");

        assertThatThrownBy(() -> EventCodec.decode(Topics.USAGE_EVENTS, json.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("'to' must be after 'from'");
    }

    @Test
    void oversized_record_is_refused_before_parsing() {
        byte[] huge = new byte[EventCodec.MAX_RECORD_BYTES + 1];

        assertThatThrownBy(() -> EventCodec.decode(Topics.GPU_TELEMETRY, huge))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("over the limit");
    }

    @Test
    void deeply_nested_input_is_refused() {
        String deep = "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000);

        assertThatThrownBy(() -> EventCodec.decode(Topics.NODE_EVENTS, deep.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MalformedEventException.class);
    }

    @Test
    void a_node_command_without_an_epoch_is_unfenced_and_one_with_an_epoch_keeps_it() {
        NodeCommand fenced = Samples.nodeCommand().withEpoch(7);
        String json = EventCodec.encodeToString(fenced);
        assertThat(json).contains("\"epoch\":7");
        assertThat(EventCodec.decode(Topics.NODE_COMMANDS.name(), NodeCommand.class, json.getBytes(
                java.nio.charset.StandardCharsets.UTF_8)).epoch()).isEqualTo(7);
        // a scheduler from before leader election wrote no epoch: such a command reads as epoch 0
        String old = json.replace(",\"epoch\":7", "").replace("\"epoch\":7,", "");
        assertThat(old).doesNotContain("epoch");
        assertThat(EventCodec.decode(Topics.NODE_COMMANDS.name(), NodeCommand.class, old.getBytes(
                java.nio.charset.StandardCharsets.UTF_8)).epoch()).isZero();
        assertThatThrownBy(() -> Samples.nodeCommand().withEpoch(-1)).hasMessageContaining("epoch");
    }

    @Test
    void tombstone_decodes_to_null() {
        assertThat(EventCodec.decode(Topics.GPU_INVENTORY, null)).isNull();
    }

    @Test
    void times_are_iso_text_in_utc() {
        assertThat(EventCodec.encodeToString(Samples.usageEvent()))
                .contains("\"from\":\"2026-12-01T10:00:00Z\"");
    }
}
