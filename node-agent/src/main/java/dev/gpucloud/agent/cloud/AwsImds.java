package dev.gpucloud.agent.cloud;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * AWS EC2 instance metadata, version 2: a session token from PUT /latest/api/token, then
 * {@code spot/instance-action} (a spot interruption: {"action": "terminate", "time": ...}, two
 * minutes ahead) and {@code events/recommendations/rebalance} ({"noticeTime": ...}); 404 means
 * there is none.
 */
public final class AwsImds implements MetadataProvider {

    /** AWS gives two minutes' notice before it reclaims a spot instance. */
    public static final Duration NOTICE = Duration.ofMinutes(2);
    static final String TOKEN_TTL_SECONDS = "21600";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String base;
    private final MetadataClient client;
    private String token;
    private Instant tokenExpires = Instant.MIN;

    public AwsImds(String endpoint, Duration timeout) {
        this.base = strip(endpoint);
        this.client = new MetadataClient(timeout);
    }

    @Override
    public String cloud() {
        return "aws";
    }

    @Override
    public synchronized List<CloudNotice> notices(Instant now) throws MetadataException {
        List<CloudNotice> notices = new ArrayList<>();
        MetadataClient.Answer action = get("/latest/meta-data/spot/instance-action", now);
        if (action.status() == 200) {
            JsonNode json = json(action, "spot/instance-action");
            String what = json.path("action").asText("");
            Instant at = instant(json.path("time").asText(null));
            Instant deadline = at != null ? at : now.plus(NOTICE);
            notices.add(new CloudNotice(CloudNotice.Kind.SPOT_INTERRUPTION, cloud(), "instance-action:" + what + ":"
                    + json.path("time").asText(""), deadline,
                    "AWS spot instance-action " + (what.isEmpty() ? "(no action)" : what) + " at " + deadline));
        } else if (action.status() != 404) {
            throw unexpected("spot/instance-action", action);
        }
        MetadataClient.Answer rebalance = get("/latest/meta-data/events/recommendations/rebalance", now);
        if (rebalance.status() == 200) {
            JsonNode json = json(rebalance, "events/recommendations/rebalance");
            String noticeTime = json.path("noticeTime").asText("");
            notices.add(new CloudNotice(CloudNotice.Kind.REBALANCE_RECOMMENDATION, cloud(), "rebalance:" + noticeTime,
                    null, "AWS rebalance recommendation noticed at " + noticeTime));
        } else if (rebalance.status() != 404) {
            throw unexpected("events/recommendations/rebalance", rebalance);
        }
        return notices;
    }

    @Override
    public synchronized InstanceFacts instance() throws MetadataException {
        Instant now = Instant.now();
        String type = text(get("/latest/meta-data/instance-type", now));
        String zone = text(get("/latest/meta-data/placement/availability-zone", now));
        String lifecycle = text(get("/latest/meta-data/instance-life-cycle", now));
        String capacity = lifecycle == null ? null : lifecycle.equals("spot") ? "spot" : "on-demand";
        return new InstanceFacts(type, zone, capacity);
    }

    private MetadataClient.Answer get(String path, Instant now) throws MetadataException {
        MetadataClient.Answer answer = client.get(base + path, Map.of("X-aws-ec2-metadata-token", token(now)));
        if (answer.status() == 401) {
            token = null; // expired or revoked: one new token, one more try
            answer = client.get(base + path, Map.of("X-aws-ec2-metadata-token", token(now)));
        }
        return answer;
    }

    private String token(Instant now) throws MetadataException {
        if (token == null || now.isAfter(tokenExpires)) {
            MetadataClient.Answer answer = client.put(base + "/latest/api/token",
                    Map.of("X-aws-ec2-metadata-token-ttl-seconds", TOKEN_TTL_SECONDS));
            if (answer.status() != 200 || answer.body().isBlank() || answer.body().length() > 1024
                    || answer.body().contains("<")) {
                throw new MetadataException("IMDSv2 token request to " + base + " answered " + answer.status() + ": "
                        + MetadataClient.excerpt(answer.body()));
            }
            token = answer.body().strip();
            tokenExpires = now.plusSeconds(Long.parseLong(TOKEN_TTL_SECONDS) - 60);
        }
        return token;
    }

    private static String text(MetadataClient.Answer answer) {
        return answer.status() == 200 && !answer.body().isBlank() && !answer.body().contains("<")
                ? answer.body().strip() : null;
    }

    private JsonNode json(MetadataClient.Answer answer, String what) throws MetadataException {
        try {
            JsonNode node = JSON.readTree(answer.body());
            if (node == null || !node.isObject()) {
                throw new MetadataException("AWS " + what + " is not a JSON object: " + MetadataClient.excerpt(answer.body()));
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new MetadataException("AWS " + what + " is not JSON (content-type " + answer.contentType() + "): "
                    + MetadataClient.excerpt(answer.body()));
        }
    }

    private MetadataException unexpected(String what, MetadataClient.Answer answer) {
        return new MetadataException("AWS " + what + " answered HTTP " + answer.status() + ": "
                + MetadataClient.excerpt(answer.body()));
    }

    static Instant instant(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return Instant.parse(text.strip());
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    static String strip(String endpoint) {
        return endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint;
    }
}
