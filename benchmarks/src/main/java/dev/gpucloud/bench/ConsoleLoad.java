package dev.gpucloud.bench;

import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.http.PemTrust;
import dev.gpucloud.identity.BearerToken;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The web console's page loads with a full tenant: submits {@code jobs} jobs for one tenant over gRPC (most of them
 * wait: the fleet is small), then loads the jobs page (first page, and a page deep in the list through its next
 * link), and one job's page, {@code loads} times each, one after another as a browser would, with the session cookie,
 * and prints p50, p95 and p99 of the whole answer (first byte to last) per page.
 *
 * <p>Arguments: HOST:PORT JOBS LOADS TENANT (the token in GPUCLOUD_TOKEN, the stack's CA in GPUCLOUD_CA_FILE).
 */
public final class ConsoleLoad {

    private ConsoleLoad() {
    }

    public static void main(String[] args) throws Exception {
        String server = args[0];
        int jobs = Integer.parseInt(args[1]);
        int loads = Integer.parseInt(args[2]);
        String tenant = args[3];
        String token = System.getenv("GPUCLOUD_TOKEN");
        Path ca = Path.of(System.getenv("GPUCLOUD_CA_FILE"));
        ManagedChannel channel = Grpc.newChannelBuilder(server, io.grpc.TlsChannelCredentials.newBuilder()
                .trustManager(ca.toFile()).build()).intercept(new BearerToken(token).interceptor()).build();
        var stub = JobServiceGrpc.newBlockingStub(channel);
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<String>> submitted = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            int n = i;
            submitted.add(pool.submit(() -> stub.withDeadlineAfter(60, TimeUnit.SECONDS).submitJob(SubmitJobRequest
                    .newBuilder().setTenant(tenant).setClientRequestId("console-load-" + UUID.randomUUID())
                    .setSpec(JobSpec.newBuilder().setName("load-" + n).setWorkers(1).setGpusPerWorker(1)
                            .addGpuModels("A100-SXM4-40GB").addCommand("sleep").addCommand("3600")).build())
                    .getJob().getJobId()));
        }
        String someJob = null;
        for (Future<String> f : submitted) {
            someJob = f.get();
        }
        pool.shutdown();
        System.out.printf(Locale.ROOT, "submitted %d jobs for %s in %.1f s%n", jobs, tenant,
                (System.nanoTime() - started) / 1e9);
        channel.shutdownNow();

        HttpClient http = HttpClient.newBuilder().sslContext(PemTrust.sslContext(ca))
                .followRedirects(HttpClient.Redirect.NEVER).connectTimeout(Duration.ofSeconds(10)).build();
        String base = "https://" + server;
        String cookie = "gpucloud_console=" + token;
        // a page deep in the list: follow the next links 20 times
        String deep = "/console/jobs";
        for (int i = 0; i < 20; i++) {
            String body = get(http, base + deep, cookie).body();
            String next = body.replaceAll("(?s).*<a href=\"([^\"]*)\" rel=\"next\".*", "$1");
            if (next.equals(body)) {
                break;
            }
            deep = next.replace("&amp;", "&");
        }
        measure(http, base + "/console/jobs", cookie, loads, "jobs page (first 50)");
        measure(http, base + deep, cookie, loads, "jobs page (21st page, keyset)");
        measure(http, base + "/console/jobs?state=PENDING", cookie, loads, "jobs page (state=PENDING)");
        measure(http, base + "/console/jobs/" + someJob, cookie, loads, "job page");
    }

    static HttpResponse<String> get(HttpClient http, String url, String cookie) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).header("Cookie", cookie)
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(url + " answered " + r.statusCode());
        }
        return r;
    }

    static void measure(HttpClient http, String url, String cookie, int loads, String what) throws Exception {
        for (int i = 0; i < Math.max(10, loads / 10); i++) { // warm-up
            get(http, url, cookie);
        }
        double[] ms = new double[loads];
        for (int i = 0; i < loads; i++) {
            long t = System.nanoTime();
            get(http, url, cookie);
            ms[i] = (System.nanoTime() - t) / 1e6;
        }
        Arrays.sort(ms);
        System.out.printf(Locale.ROOT, "%-32s n=%d  p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  max %.1f ms%n", what,
                loads, ms[(int) (loads * 0.50)], ms[(int) Math.min(loads - 1, loads * 0.95)],
                ms[(int) Math.min(loads - 1, loads * 0.99)], ms[loads - 1]);
    }
}
