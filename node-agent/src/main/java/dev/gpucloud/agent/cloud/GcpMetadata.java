package dev.gpucloud.agent.cloud;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Google Compute Engine metadata: {@code instance/preempted} answers TRUE once a preemptible or
 * spot VM is being preempted, which gives it about 30 seconds. Every request carries
 * {@code Metadata-Flavor: Google}, and so must every answer.
 */
public final class GcpMetadata implements MetadataProvider {

    /** GCP gives a preempted VM 30 seconds before it stops it. */
    public static final Duration NOTICE = Duration.ofSeconds(30);
    private static final Map<String, String> FLAVOR = Map.of("Metadata-Flavor", "Google");

    private final String base;
    private final MetadataClient client;
    private Instant preemptedSince;

    public GcpMetadata(String endpoint, Duration timeout) {
        this.base = AwsImds.strip(endpoint) + "/computeMetadata/v1/instance";
        this.client = new MetadataClient(timeout);
    }

    @Override
    public String cloud() {
        return "gcp";
    }

    @Override
    public synchronized List<CloudNotice> notices(Instant now) throws MetadataException {
        String preempted = read("/preempted");
        if (preempted == null) {
            throw new MetadataException("GCP " + base + "/preempted answered nothing");
        }
        switch (preempted.toUpperCase(java.util.Locale.ROOT)) {
            case "TRUE" -> {
                if (preemptedSince == null) {
                    preemptedSince = now;
                }
                Instant deadline = preemptedSince.plus(NOTICE);
                return List.of(new CloudNotice(CloudNotice.Kind.SPOT_INTERRUPTION, cloud(), "preempted", deadline,
                        "GCP instance/preempted is TRUE: the VM stops by " + deadline));
            }
            case "FALSE" -> {
                preemptedSince = null;
                return List.of();
            }
            default -> throw new MetadataException("GCP instance/preempted answered neither TRUE nor FALSE: "
                    + MetadataClient.excerpt(preempted));
        }
    }

    @Override
    public InstanceFacts instance() throws MetadataException {
        String machineType = last(read("/machine-type"));
        String zone = last(read("/zone"));
        String preemptible = read("/scheduling/preemptible");
        String capacity = preemptible == null ? null : preemptible.equalsIgnoreCase("TRUE") ? "spot" : "on-demand";
        return new InstanceFacts(machineType, zone, capacity);
    }

    /** A value, or null when the server says there is none (404). */
    private String read(String path) throws MetadataException {
        MetadataClient.Answer answer = client.get(base + path, FLAVOR);
        if (answer.status() == 404) {
            return null;
        }
        if (answer.status() != 200) {
            throw new MetadataException("GCP " + base + path + " answered HTTP " + answer.status() + ": "
                    + MetadataClient.excerpt(answer.body()));
        }
        if (answer.body().contains("<")) {
            throw new MetadataException("GCP " + base + path + " answered HTML, not a metadata value: "
                    + MetadataClient.excerpt(answer.body()));
        }
        return answer.body().strip();
    }

    /** "projects/123/zones/us-central1-a" gives "us-central1-a". */
    private static String last(String path) {
        return path == null ? null : path.substring(path.lastIndexOf('/') + 1);
    }
}
