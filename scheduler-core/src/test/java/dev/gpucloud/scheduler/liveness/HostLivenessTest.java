package dev.gpucloud.scheduler.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.scheduler.Fixtures;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A host's allocations are lost only on evidence: silence measured from when the scheduler could hear it. */
class HostLivenessTest {

    private static final long TIMEOUT = 60_000;
    private static final long HOUR = 3_600_000;

    /**
     * name, when the host was last heard (null: it is not in the fleet at all), when the scheduler began
     * to listen, spot reclaim deadline (0: none), now, whether the allocation is lost.
     */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("a host heard a moment ago keeps its work", 100_000L, 0L, 0L, 110_000L, false),
                Arguments.of("a host silent past the timeout loses its work", 100_000L, 0L, 0L, 170_000L, true),
                Arguments.of("silence exactly at the timeout is not yet loss", 100_000L, 0L, 0L, 160_000L, false),
                Arguments.of("an hour-old inventory right after a restart is not silence", 0L, HOUR, 0L, HOUR + 5_000, false),
                Arguments.of("after a restart silence counts from the restart", 0L, HOUR, 0L, HOUR + 61_000, true),
                Arguments.of("a host never reported since the restart waits the timeout", null, HOUR, 0L, HOUR + 30_000,
                        false),
                Arguments.of("a host never reported since the restart is lost after it", null, HOUR, 0L, HOUR + 61_000,
                        true),
                Arguments.of("a reclaimed spot host loses its work at once", 100_000L, 0L, 105_000L, 106_000L, true),
                Arguments.of("a spot host before its deadline keeps it", 100_000L, 0L, 105_000L, 104_000L, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decidesLossOnEvidence(String name, Long lastHeard, long listeningSince, long reclaimAt, long now, boolean lost) {
        Fleet fleet = new Fleet();
        if (lastHeard != null) {
            fleet.upsert(Fixtures.mkHost("h1", "A100", 8), lastHeard);
            if (reclaimAt > 0) {
                fleet.interruption("h1", reclaimAt);
            }
        }
        fleet.reserve(Assignment.whole("a1", "j1", "t", 0, "h1", List.of(0), 0, 0));
        Map<String, String> result = new HostLiveness(TIMEOUT, listeningSince).lost(fleet, now, Set.of());
        assertThat(result.containsKey("a1")).as(String.valueOf(result)).isEqualTo(lost);
    }

    /** What a host is sent now cannot be lost for its silence before the START's start-by time, and can be after. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nothingIsLostForSilenceBeforeTheStartByOfAStartSentNow(String name, Long lastHeard, long listeningSince,
            long reclaimAt, long now, boolean lost) {
        if (lastHeard == null || reclaimAt > 0) {
            return; // a START goes only to a host the fleet knows; a reclaim is not silence
        }
        Fleet fleet = new Fleet();
        fleet.upsert(Fixtures.mkHost("h1", "A100", 8), lastHeard);
        fleet.reserve(Assignment.whole("a1", "j1", "t", 0, "h1", List.of(0), 0, 0));
        HostLiveness liveness = new HostLiveness(TIMEOUT, listeningSince);
        long startBy = liveness.startByMillis(fleet.node("h1").orElseThrow());

        assertThat(liveness.lost(fleet, startBy, Set.of())).isEmpty();
        assertThat(new HostLiveness(TIMEOUT, listeningSince).lost(fleet, startBy + 1, Set.of())).containsKey("a1");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void neverJudgesHoldsThatAreNotItsOwn(String name, Long lastHeard, long listeningSince, long reclaimAt, long now,
            boolean lost) {
        Fleet fleet = new Fleet();
        fleet.reserve(Assignment.whole("foreign", "j1", "t", 0, "h1", List.of(0), 0, 0));
        assertThat(new HostLiveness(TIMEOUT, listeningSince).lost(fleet, now, Set.of("foreign"))).isEmpty();
    }

    /**
     * name, hosts in the fleet, how many of them went silent at 100 s (the rest are heard at {@code now}),
     * now, whether the work of a silent host is lost.
     */
    static Stream<Arguments> outages() {
        return Stream.of(
                Arguments.of("one silent host of ten is lost", 10, 1, 170_000L, true),
                Arguments.of("half the fleet silent: each is lost", 10, 5, 170_000L, true),
                Arguments.of("most of the fleet silent at once: the scheduler is deaf, nothing is lost", 10, 6,
                        170_000L, false),
                Arguments.of("the whole fleet silent (the broker is down): nothing is lost", 16, 16, 170_000L, false),
                Arguments.of("a fleet of two judges host by host", 2, 2, 170_000L, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outages")
    void mostOfTheFleetSilentAtOnceIsDeafnessNotLoss(String name, int hosts, int silent, long now, boolean lost) {
        Fleet fleet = new Fleet();
        for (int i = 0; i < hosts; i++) {
            fleet.upsert(Fixtures.mkHost("h" + i, "A100", 8), i < silent ? 100_000L : now);
        }
        fleet.reserve(Assignment.whole("a0", "j0", "t", 0, "h0", List.of(0), 0, 0));
        HostLiveness liveness = new HostLiveness(TIMEOUT, 0);
        assertThat(liveness.lost(fleet, now, Set.of()).containsKey("a0")).isEqualTo(lost);
        assertThat(liveness.deaf()).isEqualTo(!lost);
    }

    @org.junit.jupiter.api.Test
    void afterAnOutageSilenceCountsFromWhenHostsAreHeardAgain() {
        Fleet fleet = new Fleet();
        for (int i = 0; i < 4; i++) {
            fleet.upsert(Fixtures.mkHost("h" + i, "A100", 8), 100_000L); // the broker goes down after this
        }
        fleet.reserve(Assignment.whole("a0", "j0", "t", 0, "h0", List.of(0), 0, 0));
        HostLiveness liveness = new HostLiveness(TIMEOUT, 0);
        assertThat(liveness.lost(fleet, 200_000L, Set.of())).isEmpty(); // all silent: deaf
        // the broker is back at 210 s: three hosts are heard, h0 (which died meanwhile) is not
        for (int i = 1; i < 4; i++) {
            fleet.heard("h" + i, 210_000L);
        }
        assertThat(liveness.lost(fleet, 215_000L, Set.of())).as("h0's silence counts from 200 s").isEmpty();
        assertThat(liveness.deaf()).isFalse();
        assertThat(liveness.lost(fleet, 261_000L, Set.of())).containsKey("a0");
    }

    @org.junit.jupiter.api.Test
    void aSpotReclaimLosesItsWorkEvenWhileDeaf() {
        Fleet fleet = new Fleet();
        for (int i = 0; i < 4; i++) {
            fleet.upsert(Fixtures.mkHost("h" + i, "A100", 8), 100_000L);
        }
        fleet.interruption("h0", 150_000L);
        fleet.reserve(Assignment.whole("a0", "j0", "t", 0, "h0", List.of(0), 0, 0));
        fleet.reserve(Assignment.whole("a1", "j1", "t", 0, "h1", List.of(0), 0, 0));
        HostLiveness liveness = new HostLiveness(TIMEOUT, 0);
        assertThat(liveness.lost(fleet, 200_000L, Set.of())).containsOnlyKeys("a0");
    }

    static Stream<Arguments> placementOutages() {
        return Stream.of(
                Arguments.of("one silent host of ten takes no work", 10, 1, false),
                Arguments.of("half the fleet silent: each takes no work", 10, 5, false),
                Arguments.of("most of the fleet silent at once: every host counts as heard now", 10, 6, true),
                Arguments.of("the whole fleet silent (the broker is down): every host counts as heard now", 16, 16,
                        true),
                Arguments.of("a fleet of two judges host by host", 2, 2, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placementOutages")
    void placementBridgesDeafnessOnlyWhenMostOfTheFleetIsSilentAtOnce(String name, int hosts, int silent,
            boolean bridged) {
        long hostTimeout = 15_000;
        long now = 130_000;
        Fleet fleet = new Fleet();
        for (int i = 0; i < hosts; i++) {
            fleet.upsert(Fixtures.mkHost("h" + i, "A100", 8), i < silent ? 100_000L : now);
        }
        HostLiveness liveness = new HostLiveness(TIMEOUT, 0);
        PlacementFramework framework = new PlacementFramework(Profile.builder("t").heartbeatTimeoutMillis(hostTimeout)
                .build());

        assertThat(liveness.bridgeDeafness(fleet, now, hostTimeout)).isEqualTo(bridged);
        assertThat(fleet.placementHeardMillis(fleet.node("h0").orElseThrow())).as("h0 counts as heard at")
                .isEqualTo(bridged ? now : silent > 0 ? 100_000L : now);
        long placeable = List.copyOf(fleet.nodes()).stream().filter(n -> framework.place(singleHost(fleet,
                n.id()), PlacementRequest.of("j-" + n.id(), "t", 1, Fixtures.mkJob(1, 1)), now).isPlaced())
                .count();
        assertThat(placeable).as("hosts that take work").isEqualTo(bridged ? hosts : hosts - silent);
    }

    @org.junit.jupiter.api.Test
    void aHostWhoseHeartbeatWasDeclaredLostStaysUnheardThroughABridge() {
        Fleet fleet = new Fleet();
        for (int i = 0; i < 4; i++) {
            fleet.upsert(Fixtures.mkHost("h" + i, "A100", 8), 100_000L);
        }
        fleet.lost("h0");
        HostLiveness liveness = new HostLiveness(TIMEOUT, 0);

        assertThat(liveness.bridgeDeafness(fleet, 130_000, 15_000)).isTrue();
        PlacementFramework framework = new PlacementFramework(Profile.builder("t").heartbeatTimeoutMillis(15_000)
                .build());
        assertThat(framework.place(singleHost(fleet, "h0"), PlacementRequest.of("j0", "t", 1, Fixtures.mkJob(1, 1)),
                130_000).isPlaced()).isFalse();
        assertThat(framework.place(singleHost(fleet, "h1"), PlacementRequest.of("j1", "t", 1, Fixtures.mkJob(1, 1)),
                130_000).isPlaced()).isTrue();
    }

    /** The fleet with every host but {@code nodeId} draining, so a placement can only land there. */
    private static Fleet singleHost(Fleet fleet, String nodeId) {
        for (var n : List.copyOf(fleet.nodes())) {
            fleet.drain(n.id(), !n.id().equals(nodeId));
        }
        return fleet;
    }

    @org.junit.jupiter.api.Test
    void hostsNotHeardSinceTheSchedulerBeganToListenAreNeverBridged() {
        // a broker that keeps every host it ever saw: seven inventory records of hosts long gone (last heard at
        // 10 s), and four live hosts heard since the scheduler began to listen at 50 s
        long hostTimeout = 15_000;
        Fleet fleet = new Fleet();
        for (int i = 0; i < 7; i++) {
            fleet.upsert(Fixtures.mkHost("gone" + i, "A100", 8), 10_000L);
        }
        for (int i = 0; i < 4; i++) {
            fleet.upsert(Fixtures.mkHost("live" + i, "A100", 8), 120_000L);
        }
        HostLiveness liveness = new HostLiveness(TIMEOUT, 50_000);

        assertThat(liveness.bridgeDeafness(fleet, 130_000, hostTimeout)).as("the live hosts are heard").isFalse();

        // then three of the four live hosts go quiet together (the broker is down); the seven gone ones, the
        // majority of the fleet, neither count as silent nor are lifted
        fleet.heard("live0", 139_000L);
        assertThat(liveness.bridgeDeafness(fleet, 140_000, hostTimeout)).as("3 of 4 silent past the timeout")
                .isTrue();
        assertThat(fleet.placementHeardMillis(fleet.node("live1").orElseThrow())).isEqualTo(140_000);
        assertThat(fleet.placementHeardMillis(fleet.node("gone0").orElseThrow())).as("a host long gone stays unheard")
                .isEqualTo(10_000);
    }

    @org.junit.jupiter.api.Test
    void hostsLongGoneDoNotMakeTheSchedulerTakeItselfForDeaf() {
        // a broker that keeps every host it ever saw: seven records of hosts long gone (last heard at 10 s, before
        // the scheduler began to listen at 50 s) and four live hosts; live0 holds work and dies after 120 s
        Fleet fleet = new Fleet();
        for (int i = 0; i < 7; i++) {
            fleet.upsert(Fixtures.mkHost("gone" + i, "A100", 8), 10_000L);
        }
        for (int i = 0; i < 4; i++) {
            fleet.upsert(Fixtures.mkHost("live" + i, "A100", 8), 120_000L);
        }
        fleet.reserve(Assignment.whole("a0", "j0", "t", 0, "live0", List.of(0), 0, 0));
        HostLiveness liveness = new HostLiveness(TIMEOUT, 50_000);
        for (int i = 1; i < 4; i++) {
            fleet.heard("live" + i, 185_000L);
        }
        // 8 of 11 records are silent, but only 1 of the 4 hosts that count: a death, not deafness
        assertThat(liveness.lost(fleet, 190_000L, Set.of())).containsKey("a0");
        assertThat(liveness.deaf()).isFalse();
    }

    @org.junit.jupiter.api.Test
    void hostsHoldingWorkCountEvenUnheardSoABrokerDownSinceTheStartIsDeafness() {
        // the scheduler restarts at 50 s with four busy hosts known from inventory records of 10 s, and hears
        // nothing at all (the broker is down): past the timeout all four are silent, which is deafness
        Fleet fleet = new Fleet();
        for (int i = 0; i < 4; i++) {
            fleet.upsert(Fixtures.mkHost("h" + i, "A100", 8), 10_000L);
            fleet.reserve(Assignment.whole("a" + i, "j" + i, "t", 0, "h" + i, List.of(0), 0, 0));
        }
        for (int i = 0; i < 5; i++) {
            fleet.upsert(Fixtures.mkHost("idle" + i, "A100", 8), 10_000L); // idle and unheard: they do not count
        }
        HostLiveness liveness = new HostLiveness(TIMEOUT, 50_000);
        assertThat(liveness.lost(fleet, 111_000L, Set.of())).isEmpty();
        assertThat(liveness.deaf()).isTrue();
    }
}
