package dev.gpucloud.agent.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.cloud.FakeMetadataServer.Reply;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each cloud's notices against a local fake metadata server that answers in that cloud's formats. */
class CloudNoticeTest {

    static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
    static final Duration TIMEOUT = Duration.ofSeconds(3);

    private final FakeMetadataServer server;
    private final List<String> log = new CopyOnWriteArrayList<>();

    CloudNoticeTest() throws Exception {
        server = new FakeMetadataServer();
    }

    @AfterEach
    void close() {
        server.close();
    }

    private NoticeWatcher watcher(MetadataProvider provider) {
        return new NoticeWatcher(provider, List.of("gpu-host-1"), Clock.fixed(NOW, ZoneOffset.UTC), log::add);
    }

    @Test
    void awsSpotInterruptionAndRebalanceComeThroughImdsV2OnceEach() throws Exception {
        server.aws();
        NoticeWatcher watcher = watcher(new AwsImds(server.url(), TIMEOUT));
        assertThat(watcher.poll()).as("404 on both: no notice").isEmpty();

        server.reply("GET /latest/meta-data/events/recommendations/rebalance",
                Reply.json("{\"noticeTime\": \"2026-12-02T09:59:30Z\"}"));
        assertThat(watcher.poll()).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(NodeEventType.REBALANCE_RECOMMENDATION);
            assertThat(e.deadline()).isNull();
            assertThat(e.nodeId()).isEqualTo("gpu-host-1");
        });

        server.reply("GET /latest/meta-data/spot/instance-action",
                Reply.json("{\"action\": \"terminate\", \"time\": \"2026-12-02T10:02:00Z\"}"));
        List<NodeEvent> events = watcher.poll();
        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(NodeEventType.SPOT_INTERRUPTION);
            assertThat(e.deadline()).isEqualTo(Instant.parse("2026-12-02T10:02:00Z"));
            assertThat(e.occurredAt()).isEqualTo(NOW);
            assertThat(e.detail()).contains("terminate");
        });
        assertThat(watcher.poll()).as("the same notices are not published again").isEmpty();
        assertThat(server.requests).filteredOn(r -> r.startsWith("PUT")).as("one token, reused").hasSize(1);

        server.awsToken = "token-2";
        assertThat(watcher.poll()).isEmpty();
        assertThat(server.requests).filteredOn(r -> r.startsWith("PUT")).as("a 401 fetches a new token").hasSize(2);
        assertThat(log).isEmpty();
    }

    @Test
    void awsWithoutATimeInTheNoticeGetsTwoMinutes() throws Exception {
        server.aws().reply("GET /latest/meta-data/spot/instance-action", Reply.json("{\"action\": \"stop\"}"));
        assertThat(watcher(new AwsImds(server.url(), TIMEOUT)).poll()).singleElement()
                .satisfies(e -> assertThat(e.deadline()).isEqualTo(NOW.plus(Duration.ofMinutes(2))));
    }

    @Test
    void awsInstanceFactsComeFromTheMetadataService() throws Exception {
        server.aws().reply("GET /latest/meta-data/instance-type", Reply.text("p4d.24xlarge"))
                .reply("GET /latest/meta-data/placement/availability-zone", Reply.text("us-east-1a"))
                .reply("GET /latest/meta-data/instance-life-cycle", Reply.text("spot"));
        assertThat(new AwsImds(server.url(), TIMEOUT).instance())
                .isEqualTo(new InstanceFacts("p4d.24xlarge", "us-east-1a", "spot"));
    }

    @Test
    void gcpPreemptionGivesThirtySecondsAndNeedsTheFlavorHeader() throws Exception {
        server.require("Metadata-Flavor", "Google")
                .reply("GET /computeMetadata/v1/instance/preempted", Reply.text("FALSE"))
                .reply("GET /computeMetadata/v1/instance/machine-type",
                        Reply.text("projects/123/machineTypes/a2-highgpu-8g"))
                .reply("GET /computeMetadata/v1/instance/zone", Reply.text("projects/123/zones/us-central1-a"))
                .reply("GET /computeMetadata/v1/instance/scheduling/preemptible", Reply.text("TRUE"));
        GcpMetadata gcp = new GcpMetadata(server.url(), TIMEOUT);
        NoticeWatcher watcher = watcher(gcp);
        assertThat(watcher.poll()).isEmpty();
        server.reply("GET /computeMetadata/v1/instance/preempted", Reply.text("TRUE"));
        assertThat(watcher.poll()).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(NodeEventType.SPOT_INTERRUPTION);
            assertThat(e.deadline()).isEqualTo(NOW.plusSeconds(30));
        });
        assertThat(watcher.poll()).isEmpty();
        assertThat(gcp.instance()).isEqualTo(new InstanceFacts("a2-highgpu-8g", "us-central1-a", "spot"));
        assertThat(log).isEmpty();
    }

    @Test
    void azurePreemptIsAScheduledEventWithItsNotBefore() throws Exception {
        server.require("Metadata", "true").reply("GET " + AzureScheduledEvents.EVENTS, Reply.json("""
                {"DocumentIncarnation": 2, "Events": [
                  {"EventId": "602d9444-d2cd-49c7-8624-8643e7171297", "EventType": "Freeze",
                   "ResourceType": "VirtualMachine", "Resources": ["vm1"], "EventStatus": "Scheduled",
                   "NotBefore": "Wed, 02 Dec 2026 10:05:00 GMT", "Description": "", "EventSource": "Platform",
                   "DurationInSeconds": 9},
                  {"EventId": "C7061BAC-AFDC-4513-B24B-AA5F13A16123", "EventType": "Preempt",
                   "ResourceType": "VirtualMachine", "Resources": ["vm1"], "EventStatus": "Scheduled",
                   "NotBefore": "Wed, 02 Dec 2026 10:00:30 GMT", "Description": "", "EventSource": "Platform",
                   "DurationInSeconds": -1}]}
                """)).reply("GET " + AzureScheduledEvents.COMPUTE, Reply.json(
                "{\"vmSize\": \"Standard_ND96asr_v4\", \"location\": \"eastus\", \"zone\": \"1\", \"priority\": \"Spot\"}"));
        AzureScheduledEvents azure = new AzureScheduledEvents(server.url(), TIMEOUT);
        NoticeWatcher watcher = watcher(azure);
        assertThat(watcher.poll()).as("log: %s", log).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(NodeEventType.SPOT_INTERRUPTION);
            assertThat(e.deadline()).isEqualTo(Instant.parse("2026-12-02T10:00:30Z"));
            assertThat(e.detail()).contains("C7061BAC-AFDC-4513-B24B-AA5F13A16123");
        });
        assertThat(watcher.poll()).isEmpty();
        assertThat(azure.instance()).isEqualTo(new InstanceFacts("Standard_ND96asr_v4", "eastus-1", "spot"));
    }

    @Test
    void aMetadataServerThatHangsIsATimeoutInTheLogNotACrash() throws Exception {
        server.aws().reply("GET /latest/meta-data/spot/instance-action", new Reply(200, "application/json", "{}", 3000));
        NoticeWatcher watcher = new NoticeWatcher(new AwsImds(server.url(), Duration.ofMillis(200)),
                List.of("gpu-host-1"), Clock.fixed(NOW, ZoneOffset.UTC), log::add);
        assertThat(watcher.poll()).isEmpty();
        assertThat(watcher.poll()).isEmpty();
        assertThat(log).as("said once, not once per poll").singleElement().asString()
                .contains("aws metadata: GET " + server.url() + "/latest/meta-data/spot/instance-action timed out after 200 ms");
    }

    @Test
    void aMetadataServerThatAnswersHtmlIsSaidClearly() throws Exception {
        server.aws().reply("GET /latest/meta-data/spot/instance-action",
                new Reply(200, "text/html", "<!DOCTYPE html><html><body>Captive portal: please log in</body></html>", 0));
        assertThat(watcher(new AwsImds(server.url(), TIMEOUT)).poll()).isEmpty();
        server.require("Metadata", "true").reply("GET " + AzureScheduledEvents.EVENTS,
                new Reply(200, "text/html", "<html>proxy error</html>", 0));
        assertThat(watcher(new AzureScheduledEvents(server.url(), TIMEOUT)).poll()).isEmpty();
        assertThat(log).hasSize(2);
        assertThat(log.get(0)).contains("AWS spot/instance-action is not JSON (content-type text/html): <!DOCTYPE html>");
        assertThat(log.get(1)).contains("Azure scheduled events is not JSON (content-type text/html): <html>proxy error");
    }

    @Test
    void aMetadataServiceThatIsNotThereIsSaidAndPolledAgain() throws Exception {
        int port;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        NoticeWatcher watcher = watcher(new GcpMetadata("http://127.0.0.1:" + port, TIMEOUT));
        assertThat(watcher.poll()).isEmpty();
        assertThat(log).singleElement().asString().startsWith("gcp metadata: GET http://127.0.0.1:" + port)
                .contains("ConnectException");
    }
}
