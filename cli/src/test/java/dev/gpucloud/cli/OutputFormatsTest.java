package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.gpucloud.contracts.grpc.v1.Capacity;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest;
import dev.gpucloud.contracts.grpc.v1.Gpu;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.ModelCapacity;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.TenantUsage;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** -o text|wide|json|yaml and --no-headers on the read commands, against a real gRPC server with fixed answers. */
class OutputFormatsTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final Node NODE = Node.newBuilder().setNodeId("sim-a100-0").setHostname("h0").setInstanceType("p4d.24xlarge")
            .setZone("us-east-1a").setCapacityType("ON_DEMAND").setRdmaFabric("a").setPriceMicrosPerHour(32_770_000)
            .setHealthy(true).addGpus(Gpu.newBuilder().setIndex(0).setModel("A100-SXM4-40GB").setMemoryMib(40_960))
            .addGpus(Gpu.newBuilder().setIndex(1).setModel("A100-SXM4-40GB").setMemoryMib(40_960).setAllocated(true))
            .build();
    static final TenantUsage USAGE = TenantUsage.newBuilder().setTenant("acme").setHardQuotaMilli(16_000)
            .setSoftQuotaMilli(8_000).setWeight(2).setRunningJobs(1).setRunningMilli(8_000).setPendingJobs(1)
            .setPendingMilli(2_500).setDominantShare(0.25).build();
    static Server server;

    @BeforeAll
    static void start() throws Exception {
        server = ServerBuilder.forPort(0).addService(new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
                response.onNext(ListJobsResponse.newBuilder().addJobs(GpucloudCliTest.RUNNING).build());
                response.onCompleted();
            }

            @Override
            public void getJob(dev.gpucloud.contracts.grpc.v1.GetJobRequest request, StreamObserver<Job> response) {
                response.onNext(GpucloudCliTest.RUNNING);
                response.onCompleted();
            }
        }).addService(new ClusterServiceGrpc.ClusterServiceImplBase() {
            @Override
            public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> response) {
                response.onNext(ListNodesResponse.newBuilder().addNodes(NODE).build());
                response.onCompleted();
            }

            @Override
            public void getCapacity(GetCapacityRequest request, StreamObserver<Capacity> response) {
                response.onNext(Capacity.newBuilder().setTotalGpus(2).setFreeGpus(1).addModels(ModelCapacity.newBuilder()
                        .setModel("A100-SXM4-40GB").setCapacityType("ON_DEMAND").setRdmaFabric("a").setTotalGpus(2)
                        .setFreeGpus(1).setFreeMilli(1_000)).build());
                response.onCompleted();
            }

            @Override
            public void getTenantUsage(GetTenantUsageRequest request, StreamObserver<TenantUsage> response) {
                response.onNext(USAGE);
                response.onCompleted();
            }
        }).build().start();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    static GpucloudCliTest.Result cli(String... args) {
        return GpucloudCliTest.cliAt("localhost:" + server.getPort(), args);
    }

    @Test
    void jobs_as_a_table_with_and_without_its_header_and_wide_with_more_columns() {
        GpucloudCliTest.Result text = cli("jobs");
        assertThat(text.code()).as(text.err()).isZero();
        List<String> lines = text.out().lines().toList();
        assertThat(lines.get(0)).startsWith("JOB").contains("TENANT", "NAME", "STATE", "PLACEMENT", "REASON")
                .doesNotContain("PRIORITY");
        assertThat(lines.get(1)).startsWith("j-42").contains("acme", "RUNNING", "sim-a100-0[0, 1");
        List<String> bare = cli("jobs", "--no-headers").out().lines().toList();
        assertThat(bare).singleElement().asString().startsWith("j-42");
        assertThat(bare.get(0).split(" {2,}")).containsExactly(lines.get(1).split(" {2,}"));
        GpucloudCliTest.Result wide = cli("jobs", "-o", "wide");
        assertThat(wide.out().lines().findFirst().orElseThrow()).contains("ASKS", "CAPACITY", "PRIORITY", "SUBMITTED");
        assertThat(wide.out()).contains("2 workers x 8 GPUs", "on-demand", "normal", "2027-01-15T08:00:00Z");
    }

    @Test
    void jobs_json_and_yaml_hold_every_field_under_protobufs_names() throws Exception {
        JsonNode json = JSON.readTree(cli("jobs", "-o", "json").out());
        assertThat(json.path("jobs")).hasSize(1);
        JsonNode job = json.path("jobs").get(0);
        assertThat(job.path("jobId").asText()).isEqualTo("j-42");
        assertThat(job.path("spec").path("gpusPerWorker").asInt()).isEqualTo(8);
        assertThat(job.has("exitCode")).as("a field at its default value is written too").isTrue();
        JsonNode yaml = YAML.readTree(cli("jobs", "-o", "yaml").out());
        assertThat(yaml).isEqualTo(json);
    }

    @Test
    void get_prints_json_yaml_or_text_and_has_no_table_to_widen() throws Exception {
        JsonNode yaml = YAML.readTree(cli("get", "j-42", "-o", "yaml").out());
        assertThat(yaml.path("placement").get(1).path("nodeId").asText()).isEqualTo("sim-a100-1");
        GpucloudCliTest.Result wide = cli("get", "j-42", "-o", "wide");
        assertThat(wide.code()).isEqualTo(2);
        GpucloudCliTest.assertOneLineError(wide, "-o wide: gpucloud get prints text, json, yaml (it has no table to"
                + " widen)");
    }

    @Test
    void nodes_wide_adds_zone_price_and_memory_and_json_names_every_node() throws Exception {
        GpucloudCliTest.Result text = cli("nodes");
        assertThat(text.out().lines().toList().get(1)).startsWith("sim-a100-0").contains("1/2", "ready",
                "2 x A100-SXM4-40GB");
        GpucloudCliTest.Result wide = cli("nodes", "-o", "wide", "--no-headers");
        assertThat(wide.out().lines().toList()).singleElement().asString()
                .contains("us-east-1a", "h0", "40960Mi", "32.7700");
        JsonNode json = JSON.readTree(cli("nodes", "-o", "json").out());
        assertThat(json.path("nodes").get(0).path("priceMicrosPerHour").asText()).isEqualTo("32770000");
    }

    @Test
    void capacity_is_a_table_ending_in_the_total_and_its_json_is_the_capacity_message() throws Exception {
        GpucloudCliTest.Result text = cli("capacity");
        assertThat(text.out().lines().toList()).hasSize(3);
        assertThat(text.out().lines().toList().get(2)).startsWith("all").contains("1", "2");
        assertThat(cli("capacity", "-o", "wide").out()).contains("FREE-SHARE", "USED-SHARE");
        JsonNode json = JSON.readTree(cli("capacity", "-o", "json").out());
        assertThat(json.path("models").get(0).path("freeMilli").asText()).isEqualTo("1000");
        assertThat(json.path("freeGpus").asInt()).isEqualTo(1);
    }

    @Test
    void quota_is_usage_under_the_name_a_user_looks_for() throws Exception {
        GpucloudCliTest.Result quota = cli("quota");
        assertThat(quota.code()).as(quota.err()).isZero();
        assertThat(quota.out()).isEqualTo(cli("usage").out());
        assertThat(quota.out()).contains("tenant acme: 8 GPUs held by 1 running job(s), 2.500 GPUs asked for by 1"
                + " waiting", "quota: soft 8, hard 16 GPUs", "5.500 GPUs more may be asked for");
        JsonNode json = JSON.readTree(cli("quota", "-o", "json").out());
        assertThat(json.path("hardQuotaMilli").asText()).isEqualTo("16000");
        assertThat(cli("quota", "-o", "wide", "--no-headers").out().strip()).startsWith("acme").contains("25.0%");
        assertThat(cli("quota", "--help").out()).contains("Usage: gpucloud usage");
    }

    @Test
    void a_jobs_limit_below_one_is_one_line() {
        GpucloudCliTest.Result r = cli("jobs", "--limit", "0");
        assertThat(r.code()).isEqualTo(2);
        GpucloudCliTest.assertOneLineError(r, "--limit must be at least 1, was 0");
    }

    @Test
    void an_unknown_output_is_one_line_listing_the_formats_on_every_read_command() {
        for (List<String> command : List.of(List.of("jobs"), List.of("get", "j-42"), List.of("nodes"),
                List.of("capacity"), List.of("usage"), List.of("quota"), List.of("audit"), List.of("trace", "job-1"),
                List.of("logs", "job-1"), List.of("watch", "job-1"), List.of("config", "get-contexts"),
                List.of("invoice", "show", "acme"))) {
            java.util.List<String> args = new java.util.ArrayList<>(command);
            args.addAll(List.of("-o", "xml"));
            GpucloudCliTest.Result r = cli(args.toArray(String[]::new));
            assertThat(r.code()).as(String.join(" ", command)).isEqualTo(2);
            GpucloudCliTest.assertOneLineError(r, "'xml' is not one of text, wide, json, yaml (any case)");
        }
    }
}
