package dev.gpucloud.scheduler.service.enrolment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** Without the cluster's issuer configured, the scheduler enrols nobody and says why. */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class EnrolmentOffTest {

    @TestHTTPResource("/enrolment")
    URL enrolment;

    @Test
    void enrolment_is_off_unless_an_issuer_is_configured() throws Exception {
        HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(enrolment.toURI())
                .header("Authorization", "Bearer " + KubernetesEnrolmentTest.token(KubernetesEnrolmentTest.AGENTS,
                        "gpu-node-7", c -> { }))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(answer.statusCode()).isEqualTo(404);
        assertThat(answer.body()).contains("enrolment of node agents is off here")
                .contains("gpucloud.enrolment.kubernetes.issuer").doesNotContain("key=");
    }
}
