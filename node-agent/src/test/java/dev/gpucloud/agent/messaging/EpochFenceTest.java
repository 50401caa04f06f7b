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

    @Test
    void aRestartedAgentStillRefusesADeposedLeader(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path file = dir.resolve("leader-epoch");
        java.util.List<String> problems = new java.util.ArrayList<>();
        EpochFence before = new EpochFence(file, problems::add);
        assertThat(before.admit(4)).isTrue();
        assertThat(before.admit(7)).isTrue();

        EpochFence after = new EpochFence(file, problems::add); // the agent restarted
        assertThat(after.highest()).isEqualTo(7);
        assertThat(after.admit(4)).as("the deposed leader's command after the restart").isFalse();
        assertThat(after.admit(7)).isTrue();
        assertThat(problems).isEmpty();
    }

    @Test
    void anUnreadableEpochFileIsReportedAndTheFenceStartsFromNone(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path file = dir.resolve("leader-epoch");
        java.nio.file.Files.writeString(file, "not a number");
        java.util.List<String> problems = new java.util.ArrayList<>();
        EpochFence fence = new EpochFence(file, problems::add);
        assertThat(fence.highest()).isZero();
        assertThat(problems).singleElement().asString().contains("cannot read the leader epoch").contains(file.toString());
        assertThat(fence.admit(2)).isTrue();
        assertThat(new EpochFence(file, problems::add).highest()).isEqualTo(2);
    }
}
