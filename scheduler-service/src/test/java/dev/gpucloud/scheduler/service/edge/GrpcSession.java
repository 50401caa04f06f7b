package dev.gpucloud.scheduler.service.edge;

import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.testsupport.TestKafka;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.net.URL;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** One test's client of the scheduler: a plaintext gRPC channel, the broker, and a tenant of its own. */
final class GrpcSession implements AutoCloseable {

    final ManagedChannel channel;
    final TestKafka kafka = new TestKafka();
    final String tenant;

    GrpcSession(URL url, String tenantPrefix) {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext()
                .maxInboundMessageSize(4 * 1024 * 1024).build();
        tenant = tenantPrefix + UUID.randomUUID().toString().substring(0, 8);
    }

    JobServiceGrpc.JobServiceBlockingStub jobs() {
        return JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }
}
