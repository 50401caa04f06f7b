package dev.gpucloud.autoscaler.provider.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.CreateFleetRequest;
import software.amazon.awssdk.services.ec2.model.Ec2Exception;

/**
 * The stand-in answers as EC2 does, as far as the SDK can tell: its documents carry EC2's namespace and request id,
 * its errors are EC2's error document, and what EC2 refuses it refuses too, so a provider bug shows as a failure
 * here rather than as a stand-in that accepts anything.
 */
class Ec2StandInTest {

    Ec2StandIn ec2;
    Ec2Client client;

    @BeforeEach
    void start() {
        ec2 = Ec2StandIn.start();
        ec2.fleet().subnet("subnet-a", "us-east-1a");
        client = Ec2Client.builder()
                .endpointOverride(ec2.endpoint())
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(RetryMode.STANDARD).retryStrategy(b -> b.maxAttempts(1)))
                .build();
    }

    @AfterEach
    void stop() {
        client.close();
        ec2.close();
    }

    @Test
    void a_response_is_ec2_xml_whose_request_id_the_sdk_reads() throws Exception {
        var raw = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(ec2.endpoint() + "/"))
                        .header("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
                        .POST(HttpRequest.BodyPublishers.ofString("Action=DescribeInstances&Version=2016-11-15"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(raw.statusCode()).isEqualTo(200);
        assertThat(raw.body()).contains("<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">")
                .contains("<requestId>").contains("<reservationSet>");

        var response = client.describeInstances(r -> {});
        assertThat(response.responseMetadata().requestId()).isNotBlank().isNotEqualTo("UNKNOWN");
    }

    @Test
    void an_error_is_ec2s_error_document_and_the_sdk_reads_its_code_status_and_request_id() {
        Ec2Exception e = catchThrowableOfType(Ec2Exception.class, () -> client.describeVpcs(r -> {}));

        assertThat(e.statusCode()).isEqualTo(400);
        assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InvalidAction");
        assertThat(e.requestId()).isNotBlank();
    }

    @Test
    void throttling_is_a_503_request_limit_exceeded_that_the_sdk_counts_as_throttling() {
        ec2.throttleNext(1);

        Ec2Exception e = catchThrowableOfType(Ec2Exception.class, () -> client.describeInstances(r -> {}));

        assertThat(e.statusCode()).isEqualTo(503);
        assertThat(e.awsErrorDetails().errorCode()).isEqualTo("RequestLimitExceeded");
        assertThat(e.isThrottlingException()).isTrue();
    }

    @Test
    void what_ec2_refuses_the_stand_in_refuses() {
        assertThat(code(() -> client.createFleet(r -> r.type("maintain"))))
                .isEqualTo("InvalidParameterValue");
        assertThat(code(() -> client.describeInstances(r -> r.filters(f -> f.name("no-such-filter").values("x")))))
                .isEqualTo("InvalidParameterValue");
        assertThat(code(() -> client.createFleet(r -> r.type("instant")
                .targetCapacitySpecification(t -> t.totalTargetCapacity(1).defaultTargetCapacityType("spot"))
                .launchTemplateConfigs(c -> c.launchTemplateSpecification(s -> s.launchTemplateId("lt-1"))
                        .overrides(o -> o.subnetId("subnet-a").placement(p -> p.groupName("never-created")))))))
                .isEqualTo("InvalidPlacementGroup.Unknown");
        assertThat(code(() -> client.terminateInstances(r -> r.instanceIds("i-0123456789abcdef0"))))
                .isEqualTo("InvalidInstanceID.NotFound");
        client.createFleet(r -> instantFleet(r, 1).clientToken("token-1"));
        assertThat(code(() -> client.createFleet(r -> instantFleet(r, 2).clientToken("token-1"))))
                .isEqualTo("IdempotentParameterMismatch");
        client.createPlacementGroup(r -> r.groupName("pg").strategy("cluster"));
        assertThat(code(() -> client.createPlacementGroup(r -> r.groupName("pg").strategy("cluster"))))
                .isEqualTo("InvalidPlacementGroup.Duplicate");
    }

    private static CreateFleetRequest.Builder instantFleet(CreateFleetRequest.Builder r, int count) {
        return r.type("instant")
                .targetCapacitySpecification(t -> t.totalTargetCapacity(count).defaultTargetCapacityType("on-demand"))
                .launchTemplateConfigs(c -> c.launchTemplateSpecification(s -> s.launchTemplateId("lt-1"))
                        .overrides(o -> o.subnetId("subnet-a").instanceType("p5.48xlarge")));
    }

    private static String code(Runnable call) {
        return catchThrowableOfType(Ec2Exception.class, call::run).awsErrorDetails().errorCode();
    }
}
