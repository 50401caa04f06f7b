package dev.gpucloud.agent.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EpochFenceTest {

    @Test
    void commandsOfTheNewestLeaderPassAndThoseOfADeposedOneAreRefused() {
        EpochFence fence = new EpochFence();
        assertThat(fence.admit(0)).as("unfenced sender, no leader yet").isTrue();
        assertThat(fence.admit(3)).isTrue();
        assertThat(fence.admit(3)).as("the same leader again").isTrue();
        assertThat(fence.admit(2)).as("a deposed leader's late command").isFalse();
        assertThat(fence.admit(0)).as("unfenced once a leader has spoken").isFalse();
        assertThat(fence.highest()).isEqualTo(3);
        assertThat(fence.admit(5)).as("a newer leader").isTrue();
        assertThat(fence.admit(3)).isFalse();
        assertThat(fence.highest()).isEqualTo(5);
    }
}
