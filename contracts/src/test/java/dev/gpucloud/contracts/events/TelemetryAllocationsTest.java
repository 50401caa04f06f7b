package dev.gpucloud.contracts.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The scheduler's reading of a telemetry sample: its host and allocations, the GPU readings skipped. */
class TelemetryAllocationsTest {

    private static final String WHERE = Topics.GPU_TELEMETRY.name();

    @Test
    void readsTheHostAndWhatItRunsFromAFullSample() {
        AllocationReport running = new AllocationReport("alloc-1", "job-1", "acme", List.of(0, 1), null, null, 1000);
        byte[] sample = EventCodec.encode(Samples.telemetry().withAllocations(List.of(running)));

        TelemetryAllocations read = EventCodec.decode(WHERE, TelemetryAllocations.class, sample);

        assertThat(read.nodeId()).isEqualTo("node-a100-1");
        assertThat(read.allocations()).containsExactly(running);
    }

    @Test
    void aSampleThatDoesNotSayWhatItRunsGivesNull() {
        TelemetryAllocations read = EventCodec.decode(WHERE, TelemetryAllocations.class,
                EventCodec.encode(Samples.telemetry()));
        assertThat(read.allocations()).isNull();
    }

    @Test
    void aSampleWithoutItsHostIsRefusedNamingTheField() {
        byte[] noHost = "{\"hostname\":\"h\",\"allocations\":[]}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> EventCodec.decode(WHERE, TelemetryAllocations.class, noHost))
                .isInstanceOf(MalformedEventException.class).hasMessageContaining(WHERE).hasMessageContaining("nodeId");
    }
}
