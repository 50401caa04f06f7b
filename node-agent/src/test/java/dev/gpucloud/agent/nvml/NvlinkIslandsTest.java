package dev.gpucloud.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** GPUs joined by active NVLinks, directly or through an NVSwitch, share an island. */
class NvlinkIslandsTest {

    static final String A = "00000000:18:00.0";
    static final String B = "00000000:2A:00.0";
    static final String C = "00000000:3A:00.0";
    static final String D = "00000000:4A:00.0";
    static final String SWITCH_1 = "00000000:C5:00.0";
    static final String SWITCH_2 = "00000000:C6:00.0";

    @Test
    void noLinksMeansNoIsland() {
        assertThat(NvlinkIslands.of(Map.of(0, A, 1, B), Map.of())).containsExactly(Map.entry(0, -1), Map.entry(1, -1));
    }

    @Test
    void directlyLinkedPairsAreTwoIslands() {
        assertThat(NvlinkIslands.of(Map.of(0, A, 1, B, 2, C, 3, D),
                Map.of(0, List.of(B, B), 1, List.of(A), 2, List.of(D), 3, List.of(C))))
                .containsExactly(Map.entry(0, 0), Map.entry(1, 0), Map.entry(2, 1), Map.entry(3, 1));
    }

    @Test
    void gpusOnTheSameNvswitchesAreOneIsland() {
        assertThat(NvlinkIslands.of(Map.of(0, A, 1, B, 2, C),
                Map.of(0, List.of(SWITCH_1, SWITCH_2), 1, List.of(SWITCH_2), 2, List.of(SWITCH_1))))
                .containsExactly(Map.entry(0, 0), Map.entry(1, 0), Map.entry(2, 0));
    }

    @Test
    void aGpuLinkedOnlyOneWayStillJoins() {
        assertThat(NvlinkIslands.of(Map.of(0, A, 1, B, 2, C), Map.of(1, List.of(C))))
                .containsExactly(Map.entry(0, -1), Map.entry(1, 0), Map.entry(2, 0));
    }

    @Test
    void busIdsInEitherDomainWidthAndCaseMatch() {
        assertThat(NvlinkIslands.of(Map.of(0, "0000:18:00.0", 1, "00000000:2a:00.0"),
                Map.of(0, List.of("00000000:2A:00.0"), 1, List.of("00000000:18:00.0 "))))
                .containsExactly(Map.entry(0, 0), Map.entry(1, 0));
    }
}
