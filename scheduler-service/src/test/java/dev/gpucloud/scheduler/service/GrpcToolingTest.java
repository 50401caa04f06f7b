package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import grpc.health.v1.HealthGrpc;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Standard gRPC tools (grpcurl, grpc_health_probe) work with no .proto in hand. */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class GrpcToolingTest {

    @TestHTTPResource("/")
    URL url;

    @Test
    void health_and_reflection_answer_on_the_http_port() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        try {
            HealthCheckResponse health = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance());
            assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

            CompletableFuture<List<String>> services = new CompletableFuture<>();
            StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .serverReflectionInfo(new StreamObserver<>() {
                        @Override
                        public void onNext(ServerReflectionResponse response) {
                            services.complete(response.getListServicesResponse().getServiceList().stream()
                                    .map(ServiceResponse::getName).toList());
                        }

                        @Override
                        public void onError(Throwable t) {
                            services.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
            requests.onNext(ServerReflectionRequest.newBuilder().setListServices("*").build());
            assertThat(services.get(10, TimeUnit.SECONDS))
                    .contains("gpucloud.v1.JobService", "gpucloud.v1.ClusterService");
            requests.onCompleted();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
