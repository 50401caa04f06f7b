package dev.gpucloud.bench;

import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.LogChunk;
import dev.gpucloud.contracts.grpc.v1.LogLine;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.identity.BearerToken;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How long a line takes from a worker's write to a follower of StreamLogs, end to end on a running stack whose agent
 * runs real processes: each of {@code workers} jobs is one python3 worker printing {@code rate} lines a second, each
 * line the microsecond it was written at and its number, for {@code seconds}; one follow per job (what
 * {@code gpucloud logs JOB -f} opens) takes the time each line arrives. Same machine, same clock. Prints the lines
 * seen, missing and repeated, and the latency's percentiles over the lines after the first {@code warmup} seconds.
 *
 * <p>Arguments: {@code SERVER WORKERS RATE SECONDS WARMUP TENANT}; env GPUCLOUD_TOKEN and GPUCLOUD_CA_FILE as for
 * {@link SchedulerLoad}.
 */
public final class LogLatency {

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: LogLatency SERVER WORKERS RATE SECONDS WARMUP TENANT");
            System.exit(2);
        }
        String server = args[0];
        int workers = Integer.parseInt(args[1]);
        int rate = Integer.parseInt(args[2]);
        int seconds = Integer.parseInt(args[3]);
        int warmup = Integer.parseInt(args[4]);
        String tenant = args[5];
        String ca = System.getenv("GPUCLOUD_CA_FILE");
        ManagedChannelBuilder<?> builder = ca == null || ca.isBlank()
                ? ManagedChannelBuilder.forTarget(server).usePlaintext()
                : Grpc.newChannelBuilder(server, io.grpc.TlsChannelCredentials.newBuilder()
                        .trustManager(new java.io.File(ca)).build());
        String token = System.getenv("GPUCLOUD_TOKEN");
        if (token != null && !token.isBlank()) {
            builder.intercept(new BearerToken(token).interceptor());
        }
        ManagedChannel channel = builder.build();
        JobServiceGrpc.JobServiceBlockingStub jobs = JobServiceGrpc.newBlockingStub(channel);
        JobServiceGrpc.JobServiceStub async = JobServiceGrpc.newStub(channel);
        int lines = rate * seconds;
        String script = "import sys,time\n"
                + "n=" + lines + "\nstep=1.0/" + rate + "\nt0=time.time()\n"
                + "for i in range(n):\n"
                + "    d=t0+i*step-time.time()\n"
                + "    if d>0: time.sleep(d)\n"
                + "    sys.stdout.write('%d %d\\n' % (time.time_ns()//1000, i)); sys.stdout.flush()\n";
        List<String> ids = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            ids.add(jobs.withDeadlineAfter(30, TimeUnit.SECONDS).submitJob(SubmitJobRequest.newBuilder()
                    .setTenant(tenant).setClientRequestId(UUID.randomUUID().toString())
                    .setSpec(JobSpec.newBuilder().setName("log-bench-" + w).setWorkers(1).setMilliGpu(100)
                            .addCommand("python3").addCommand("-c").addCommand(script))
                    .build()).getJob().getJobId());
        }
        long warmUntilMicros = System.currentTimeMillis() * 1000 + warmup * 1_000_000L;
        long[] latencies = new long[workers * lines];
        AtomicLong count = new AtomicLong();
        AtomicLong seen = new AtomicLong();
        AtomicLong repeated = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        CountDownLatch done = new CountDownLatch(workers);
        long started = System.nanoTime();
        for (String id : ids) {
            ConcurrentHashMap<Long, Boolean> numbers = new ConcurrentHashMap<>();
            async.withDeadlineAfter(seconds + 600L, TimeUnit.SECONDS).streamLogs(StreamLogsRequest.newBuilder()
                    .setJobId(id).setFollow(true).build(), new StreamObserver<LogChunk>() {
                        @Override
                        public void onNext(LogChunk chunk) {
                            java.time.Instant arrived = java.time.Instant.now();
                            long now = arrived.getEpochSecond() * 1_000_000 + arrived.getNano() / 1000;
                            for (LogLine line : chunk.getLinesList()) {
                                String[] parts = line.getText().split(" ");
                                if (parts.length != 2) {
                                    continue;
                                }
                                long written = Long.parseLong(parts[0]);
                                if (numbers.put(Long.parseLong(parts[1]), Boolean.TRUE) != null) {
                                    repeated.incrementAndGet();
                                    continue;
                                }
                                seen.incrementAndGet();
                                if (written >= warmUntilMicros) {
                                    long at = count.getAndIncrement();
                                    if (at < latencies.length) {
                                        latencies[(int) at] = Math.max(0, now - written);
                                    }
                                }
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                            failed.incrementAndGet();
                            System.err.println(id + ": " + t);
                            done.countDown();
                        }

                        @Override
                        public void onCompleted() {
                            done.countDown();
                        }
                    });
        }
        boolean all = done.await(seconds + 900L, TimeUnit.SECONDS);
        double wall = (System.nanoTime() - started) / 1e9;
        int n = (int) Math.min(count.get(), latencies.length);
        long[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        long expected = (long) workers * lines;
        System.out.printf(Locale.ROOT, "%d workers x %d lines/s for %d s = %d lines/s offered, %d lines expected%n",
                workers, rate, seconds, workers * rate, expected);
        System.out.printf(Locale.ROOT, "seen %d (missing %d, repeated %d), %d follow(s) failed%s, %.0f s wall%n",
                seen.get(), expected - seen.get(), repeated.get(), failed.get(), all ? "" : ", some never ended",
                wall);
        if (n > 0) {
            System.out.printf(Locale.ROOT, "latency write -> follower over %d lines after %d s warm-up:"
                    + " p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms%n", n, warmup, pct(sorted, 50),
                    pct(sorted, 90), pct(sorted, 99), sorted[n - 1] / 1000.0);
        }
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        System.exit(failed.get() == 0 && seen.get() == expected ? 0 : 1);
    }

    private static double pct(long[] sorted, int p) {
        int i = (int) Math.min(sorted.length - 1, Math.ceil(p / 100.0 * sorted.length) - 1);
        return sorted[Math.max(0, i)] / 1000.0;
    }
}
