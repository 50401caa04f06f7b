package dev.gpucloud.autoscaler.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The packing count the planner compares types by: best-fit decreasing, a worker on one host. */
class HostsNeededTest {

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("one worker of one GPU", new long[] {0, 1}, 8, 1L),
                Arguments.of("eight single GPUs fill one host", new long[] {0, 8}, 8, 1L),
                Arguments.of("nine single GPUs need two", new long[] {0, 9}, 8, 2L),
                Arguments.of("three 6s leave room for three 2s", new long[] {0, 0, 3, 0, 0, 0, 3}, 8, 3L),
                Arguments.of("5 + 3 share a host, edge case", new long[] {0, 0, 0, 1, 0, 1}, 8, 1L),
                Arguments.of("two 5s cannot share", new long[] {0, 0, 0, 0, 0, 2}, 8, 2L),
                Arguments.of("4-GPU hosts for 4-GPU workers", new long[] {0, 0, 0, 0, 5}, 4, 5L),
                Arguments.of("a thousand 2s on 8-GPU hosts", new long[] {0, 0, 1000}, 8, 250L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void packs(String name, long[] workersBySize, int gpusPerHost, long hosts) {
        assertThat(LaunchPlanner.hostsNeeded(workersBySize, gpusPerHost)).isEqualTo(hosts);
    }
}
