package dev.gpucloud.autoscaler.provider.aws;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.autoscaler.core.Capacity;
import dev.gpucloud.autoscaler.provider.LaunchOutcome;
import dev.gpucloud.autoscaler.provider.LaunchRequest;
import dev.gpucloud.autoscaler.provider.ProviderInstance;
import dev.gpucloud.autoscaler.provider.aws.Ec2ProviderConfig.LaunchTemplate;
import dev.gpucloud.autoscaler.provider.aws.Ec2StandIn.Call;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.ec2.Ec2Client;
/**
 * What the provider tests share: the stand-in, a real SDK client pointed at it over HTTP (with the production
 * retry strategy, shorter backoff), a provider for the fleet {@code gpu-east}, and builders of requests.
 */
abstract class Ec2StandInCase {

    static final String A = "us-east-1a";
    static final String B = "us-east-1b";
    static final String C = "us-east-1c";

    Ec2StandIn ec2;
    Ec2Client client;
    Ec2Provider provider;

    @BeforeEach
    void start() {
        ec2 = Ec2StandIn.start();
        ec2.fleet().subnet("subnet-a", A).subnet("subnet-b", B).subnet("subnet-c", C);
        client = mkClient();
        provider = mkProvider("gpu-east");
    }

    @AfterEach
    void stop() {
        client.close();
        ec2.close();
    }

    Ec2Client mkClient() {
        return Ec2Client.builder()
                .endpointOverride(ec2.endpoint())
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(Ec2Clients.overrides(
                        Ec2Clients.DEFAULT_MAX_ATTEMPTS, Duration.ofMillis(10), Duration.ofMillis(50)))
                .build();
    }

    Ec2Provider mkProvider(String fleetName) {
        Map<String, String> subnets = new LinkedHashMap<>();
        subnets.put(A, "subnet-a");
        subnets.put(B, "subnet-b");
        subnets.put(C, "subnet-c");
        return new Ec2Provider(client, Ec2ProviderConfig.of(fleetName, LaunchTemplate.byId("lt-0abc").atVersion("3"), subnets));
    }

    static LaunchRequest mkSpot(String requestId, int count, String... zones) {
        return mkRequest(requestId, count, Capacity.SPOT, false, null, zones);
    }

    static LaunchRequest mkRequest(
            String requestId, int count, Capacity capacity, boolean fallback, String placementGroup, String... zones) {
        return new LaunchRequest(requestId, "train", "p5.48xlarge", count, capacity, fallback, List.of(zones),
                placementGroup, Map.of("team", "vision"));
    }

    Call single(String action) {
        List<Call> calls = ec2.calls(action);
        assertThat(calls).hasSize(1);
        return calls.get(0);
    }

    static Map<String, String> instanceTags(Call call) {
        var spec = Ec2StandInFleet.members(call.params(), "TagSpecification").get(0);
        assertThat(spec).containsEntry("ResourceType", "instance");
        return Ec2StandInFleet.members(spec, "Tag").stream()
                .collect(Collectors.toMap(t -> t.get("Key"), t -> t.get("Value")));
    }

    static List<String> ids(LaunchOutcome outcome) {
        return outcome.launched().stream().map(ProviderInstance::instanceId).toList();
    }
}

