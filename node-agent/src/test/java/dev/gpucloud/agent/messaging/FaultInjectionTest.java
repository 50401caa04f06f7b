package dev.gpucloud.agent.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Faults injected into a simulated host through /agent/faults, seen on the real broker. */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
class FaultInjectionTest {

    private static final Duration WAIT = Duration.ofSeconds(45);

    @Inject
    AgentConfig config;

    private String node() {
        return config.sim().nodePrefix() + "-a10g-spot-0";
    }

    @Test
    void injectedSpotInterruptionXidAndHostLossArePublished() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        String node = node();
        given().post("/agent/faults/" + node + "/meteor").then().statusCode(400)
                .body("error", containsString("unknown fault type 'meteor'"));
        given().post("/agent/faults/nowhere-0/xid").then().statusCode(404)
                .body("error", equalTo("no simulated host 'nowhere-0' here"));
        given().post("/agent/faults/" + node + "/xid?gpu=5").then().statusCode(400)
                .body("error", containsString("gpu '5' is not a GPU index"));
        given().post("/agent/faults/" + node + "/spot-interruption?deadline=soon").then().statusCode(400)
                .body("error", containsString("deadline 'soon'"));
        // every parameter a fault uses is required: none is a default XID 79 or a default notice
        given().post("/agent/faults/" + node + "/xid?gpu=0").then().statusCode(400)
                .body("parameter", equalTo("xid")).body("error", containsString("parameter 'xid' is required"));
        given().post("/agent/faults/" + node + "/xid?xid=79").then().statusCode(400)
                .body("parameter", equalTo("gpu"));
        given().post("/agent/faults/" + node + "/xid?gpu=0&xid=7x9").then().statusCode(400)
                .body("parameter", equalTo("xid")).body("error", containsString("xid '7x9'"));
        given().post("/agent/faults/" + node + "/xid?gpu=0&xid=99999999").then().statusCode(400)
                .body("parameter", equalTo("xid"));
        given().post("/agent/faults/" + node + "/spot-interruption").then().statusCode(400)
                .body("parameter", equalTo("deadline"));
        given().post("/agent/faults/" + node + "/spot-interruption?deadline=100000h").then().statusCode(400)
                .body("parameter", equalTo("deadline"));

        try (TestKafka kafka = new TestKafka();
                TopicTail nodeEvents = kafka.tail(Topics.NODE_EVENTS.name());
                TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name());
                TopicTail usage = kafka.tail(Topics.USAGE_EVENTS.name());
                TopicTail inventory = kafka.tail(Topics.GPU_INVENTORY.name())) {
            Instant before = Instant.now();
            given().post("/agent/faults/" + node + "/spot-interruption?deadline=30s").then().statusCode(200);
            given().post("/agent/faults/" + node + "/xid?gpu=0&xid=48").then().statusCode(200);
            List<NodeEvent> notices = nodeEvents.until(r -> r.key().equals(node), seen -> seen.size() >= 2, WAIT)
                    .stream().map(r -> TopicTail.decode(Topics.NODE_EVENTS, r)).toList();
            assertThat(notices).extracting(NodeEvent::type)
                    .containsExactly(NodeEventType.SPOT_INTERRUPTION, NodeEventType.XID_ERROR);
            assertThat(notices.get(0).deadline()).isBetween(before.plusSeconds(29), Instant.now().plusSeconds(31));
            assertThat(notices.get(1).xid()).isEqualTo(48);
            assertThat(notices.get(1).gpuIndex()).isZero();

            NodeCommand start = CommandSender.start(node, "lost-" + System.nanoTime(), List.of(0), List.of("sleep", "600"));
            new CommandSender(kafka).send(start);
            events.until(r -> r.key().equals(start.jobId()), seen -> !seen.isEmpty(), WAIT);
            given().post("/agent/faults/" + node + "/host-loss").then().statusCode(200)
                    .body("lostAllocations[0]", equalTo(start.allocationId()));
            List<AllocationEvent> lifecycle = events.until(r -> r.key().equals(start.jobId()),
                            seen -> seen.stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r))
                                    .anyMatch(e -> e.type() == AllocationEventType.LOST), WAIT)
                    .stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();
            AllocationEvent lost = lifecycle.stream().filter(e -> e.type() == AllocationEventType.LOST).findFirst()
                    .orElseThrow();
            List<UsageEvent> intervals = usage.until(r -> r.key().equals(start.allocationId()),
                            seen -> seen.stream().map(r -> TopicTail.decode(Topics.USAGE_EVENTS, r))
                                    .anyMatch(u -> u.to().equals(lost.occurredAt())), WAIT)
                    .stream().map(r -> TopicTail.decode(Topics.USAGE_EVENTS, r))
                    .sorted(Comparator.comparing(UsageEvent::from)).toList();
            assertThat(intervals.get(intervals.size() - 1).to()).isEqualTo(lost.occurredAt());
            assertThat(inventory.until(r -> r.key().equals(node), seen -> seen.stream().anyMatch(r -> r.value() == null),
                    WAIT)).anyMatch(r -> r.value() == null);
            given().post("/agent/faults/" + node + "/xid").then().statusCode(404);
        }
    }
}
