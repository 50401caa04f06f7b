package dev.gpucloud.scheduler.spot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpotPolicyTest {

    @Test
    void anInterruptedPoolIsAvoidedForAWhile() {
        SpotPolicy p = new SpotPolicy(3, 60_000, 0.5);
        p.interrupted("us-east-1a/p4d.24xlarge", 1000);
        assertThat(p.avoidedPools(60_999)).containsExactly("us-east-1a/p4d.24xlarge");
        assertThat(p.avoidedPools(61_000)).isEmpty();
    }

    @ParameterizedTest(name = "{0}, {1} interruptions, deadline in {2} s, {3} s left -> {4}")
    @CsvSource({
            "SPOT_PREFERRED, 0, 0, 100, SPOT_PREFERRED",
            "SPOT_PREFERRED, 3, 0, 100, ON_DEMAND",
            "SPOT, 2, 0, 100, SPOT",
            "SPOT, 3, 0, 100, ON_DEMAND",
            "SPOT_PREFERRED, 0, 149, 100, ON_DEMAND",
            "SPOT_PREFERRED, 0, 151, 100, SPOT_PREFERRED",
            "ON_DEMAND, 9, 1, 100, ON_DEMAND"})
    void fallsBackToOnDemand(CapacityPreference wanted, int interruptions, long deadlineInSeconds, long left,
            CapacityPreference expected) {
        SpotPolicy p = new SpotPolicy(3, 60_000, 0.5);
        long now = 1_000_000;
        long deadline = deadlineInSeconds == 0 ? 0 : now + deadlineInSeconds * 1000;
        assertThat(p.capacityFor(wanted, interruptions, deadline, now, left)).isEqualTo(expected);
    }
}
