package dev.gpucloud.scheduler.cluster;

import static dev.gpucloud.contracts.events.NodeEventType.ECC_ERROR;
import static dev.gpucloud.contracts.events.NodeEventType.XID_ERROR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.NodeEventType;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** A fault of the GPU quarantines its host; a fault of the workload does not. */
class XidPolicyTest {

    /** NVIDIA's meaning of the XID, the event type, the XID it names, the XID it counts as, whether critical. */
    static Stream<Arguments> faults() {
        return Stream.of(
                // the GPU is in trouble
                Arguments.of("48: double-bit ECC error (DBE)", XID_ERROR, 48, 48, true),
                Arguments.of("63: row remapping (page retirement) recorded, the GPU needs a reset", XID_ERROR, 63, 63,
                        true),
                Arguments.of("64: row remapping (page retirement) failed", XID_ERROR, 64, 64, true),
                Arguments.of("74: NVLink error", XID_ERROR, 74, 74, true),
                Arguments.of("79: GPU has fallen off the bus", XID_ERROR, 79, 79, true),
                Arguments.of("92: high single-bit ECC error rate", XID_ERROR, 92, 92, true),
                Arguments.of("94: contained ECC error", XID_ERROR, 94, 94, true),
                Arguments.of("95: uncontained ECC error", XID_ERROR, 95, 95, true),
                Arguments.of("119: GSP RPC timeout", XID_ERROR, 119, 119, true),
                Arguments.of("120: GSP error", XID_ERROR, 120, 120, true),
                // the workload's own errors: the host stays in service
                Arguments.of("13: graphics engine exception, an application error", XID_ERROR, 13, 13, false),
                Arguments.of("31: GPU memory page fault, an application error", XID_ERROR, 31, 31, false),
                Arguments.of("43: GPU stopped processing (the application's channel was reset)", XID_ERROR, 43, 43,
                        false),
                Arguments.of("an XID the scheduler does not know is the application's", XID_ERROR, 999, 999, false),
                // uncorrectable ECC errors
                Arguments.of("an ECC error that names no XID counts as 48, a DBE", ECC_ERROR, null, 48, true),
                Arguments.of("an ECC error is critical whatever XID it names", ECC_ERROR, 13, 13, true),
                Arguments.of("an ECC error naming 94 (contained ECC) is critical", ECC_ERROR, 94, 94, true),
                Arguments.of("an XID event that names none counts as 48", XID_ERROR, null, 48, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void judges(String meaning, NodeEventType type, Integer xid, int countedAs, boolean critical) {
        assertThat(XidPolicy.judge(type, xid)).isEqualTo(new XidPolicy.Fault(countedAs, critical));
    }

    @ParameterizedTest(name = "{0} is not a GPU fault")
    @EnumSource(value = NodeEventType.class, names = {"XID_ERROR", "ECC_ERROR"}, mode = EnumSource.Mode.EXCLUDE)
    void judges_only_gpu_faults(NodeEventType type) {
        assertThatThrownBy(() -> XidPolicy.judge(type, 79)).hasMessageContaining("not a GPU fault");
    }
}
