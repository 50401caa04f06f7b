package dev.gpucloud.agent.cloud;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Azure Instance Metadata Service: Scheduled Events ({@code /metadata/scheduledevents}), where a
 * spot VM's eviction is an event of type {@code Preempt} with at least 30 seconds' notice
 * ({@code NotBefore}, an RFC 1123 time). Every request carries {@code Metadata: true}.
 */
public final class AzureScheduledEvents implements MetadataProvider {

    /** Azure gives an evicted spot VM at least 30 seconds. */
    public static final Duration NOTICE = Duration.ofSeconds(30);
    static final String EVENTS = "/metadata/scheduledevents?api-version=2020-07-01";
    static final String COMPUTE = "/metadata/instance/compute?api-version=2021-02-01";
    private static final Map<String, String> HEADER = Map.of("Metadata", "true");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String base;
    private final MetadataClient client;

    public AzureScheduledEvents(String endpoint, Duration timeout) {
        this.base = AwsImds.strip(endpoint);
        this.client = new MetadataClient(timeout);
    }

    @Override
    public String cloud() {
        return "azure";
    }

    @Override
    public List<CloudNotice> notices(Instant now) throws MetadataException {
        JsonNode doc = json(EVENTS, "scheduled events");
        List<CloudNotice> notices = new ArrayList<>();
        for (JsonNode event : doc.path("Events")) {
            if (!"Preempt".equals(event.path("EventType").asText())) {
                continue;
            }
            Instant notBefore = rfc1123(event.path("NotBefore").asText(""));
            Instant deadline = notBefore != null ? notBefore : now.plus(NOTICE);
            String id = event.path("EventId").asText("");
            notices.add(new CloudNotice(CloudNotice.Kind.SPOT_INTERRUPTION, cloud(), "preempt:" + id, deadline,
                    "Azure scheduled event Preempt " + id + " (" + event.path("EventStatus").asText("?")
                            + "), not before " + deadline));
        }
        return notices;
    }

    @Override
    public InstanceFacts instance() throws MetadataException {
        JsonNode compute = json(COMPUTE, "instance compute");
        String zone = compute.path("zone").asText("");
        String location = compute.path("location").asText("");
        String priority = compute.path("priority").asText("");
        return new InstanceFacts(blankToNull(compute.path("vmSize").asText("")),
                blankToNull(zone.isEmpty() ? location : location + "-" + zone),
                priority.isEmpty() ? null : priority.equalsIgnoreCase("Spot") ? "spot" : "on-demand");
    }

    private JsonNode json(String path, String what) throws MetadataException {
        MetadataClient.Answer answer = client.get(base + path, HEADER);
        if (answer.status() != 200) {
            throw new MetadataException("Azure " + what + " answered HTTP " + answer.status() + ": "
                    + MetadataClient.excerpt(answer.body()));
        }
        try {
            JsonNode node = JSON.readTree(answer.body());
            if (node == null || !node.isObject()) {
                throw new MetadataException("Azure " + what + " is not a JSON object: " + MetadataClient.excerpt(answer.body()));
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new MetadataException("Azure " + what + " is not JSON (content-type " + answer.contentType() + "): "
                    + MetadataClient.excerpt(answer.body()));
        }
    }

    static Instant rfc1123(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return ZonedDateTime.parse(text.strip(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            return AwsImds.instant(text);
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
