package dev.gpucloud.scheduler.service.console;

import dev.gpucloud.contracts.events.JobLogChunk;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.service.engine.JobQueries;
import dev.gpucloud.scheduler.service.engine.JobView;
import dev.gpucloud.scheduler.service.grpc.Access;
import dev.gpucloud.scheduler.service.logs.JobLogReader;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code /console/jobs/ID/logs}: a job's output as server-sent events, read by the same {@link JobLogReader} as
 * StreamLogs with follow, under the same limit of streams at once. Each line is one {@code line} event whose data is
 * JSON (rank, stream, at, text), which the page inserts as text; the stream ends with an {@code end} event when the
 * job's output has ended, or a {@code failure} event that says why, so that the page stops rather than reconnects.
 */
@ApplicationScoped
public class LiveOutput {

    private final JobQueries queries;
    private final JobLogReader logs;

    public LiveOutput(JobQueries queries, JobLogReader logs) {
        this.queries = queries;
        this.logs = logs;
    }

    /** Checks the request and the caller's access (a refusal is a page), then streams on the reader's thread. */
    Uni<ConsolePages.Page> stream(ConsolePages.Session session, String jobId, MultiMap params,
            HttpServerResponse response, Context context) {
        String id = ConsolePages.jobId(jobId);
        Integer rank = ConsolePages.rank(params.get("rank"));
        String stream = ConsolePages.stream(params.get("stream"));
        JobLogChunk.Stream which = stream == null ? null : JobLogChunk.Stream.valueOf(stream.toUpperCase(Locale.ROOT));
        return queries.get(id).map(job -> Access.readable(session.caller(), job)).map(job -> {
            open(response);
            if (!logs.admit()) {
                event(response, "failure", new JsonObject().put("message", "this scheduler already streams "
                        + logs.maxStreams() + " jobs' output; reload in a while"));
                response.end();
                return null;
            }
            follow(job, new JobLogReader.Request(id, true, null, rank, which), response, context);
            return null;
        });
    }

    private void follow(JobView job, JobLogReader.Request request, HttpServerResponse response, Context context) {
        AtomicBoolean gone = new AtomicBoolean();
        response.closeHandler(v -> gone.set(true));
        response.exceptionHandler(e -> gone.set(true));
        if (job.state() == JobState.PENDING && job.placement().isEmpty()) {
            event(response, "waiting", new JsonObject().put("message", "the job has not started: " + job.reason()));
        }
        logs.start(job, request, () -> JobLogReader.onContext(context, () -> queries.get(request.jobId())),
                () -> JobLogReader.onContext(context, () -> queries.workersEver(request.jobId())),
                new JobLogReader.Output() {
                    @Override
                    public boolean send(JobLogChunk chunk, List<JobLogChunk.Line> lines) {
                        while (response.writeQueueFull()) { // the browser reads slower than the topic is read
                            if (cancelled()) {
                                return false;
                            }
                            LockSupport.parkNanos(5_000_000);
                        }
                        if (cancelled()) {
                            return false;
                        }
                        StringBuilder events = new StringBuilder();
                        for (JobLogChunk.Line line : lines) {
                            events.append("event: line\ndata: ").append(new JsonObject().put("rank", chunk.rank())
                                    .put("stream", chunk.stream().name().toLowerCase(Locale.ROOT))
                                    .put("at", line.at().toString()).put("text", line.text()).encode()).append("\n\n");
                        }
                        if (!events.isEmpty()) {
                            write(context, response, events.toString());
                        }
                        return true;
                    }

                    @Override
                    public boolean cancelled() {
                        return gone.get() || response.closed();
                    }
                }, (outcome, failure) -> context.runOnContext(v -> {
                    if (gone.get() || response.closed()) {
                        return;
                    }
                    if (failure != null) {
                        event(response, "failure", new JsonObject().put("message", "cannot read the job's output just"
                                + " now; reload to try again"));
                    } else if (outcome.neverRan()) {
                        event(response, "end", new JsonObject().put("lines", 0).put("message",
                                "the job never ran, so it has no output"));
                    } else {
                        event(response, "end", new JsonObject().put("lines", outcome.lines()).put("message",
                                "the job's output has ended"));
                    }
                    response.end();
                }));
    }

    /**
     * Writes on the request's own context, not the reader's thread: over HTTP/2 a write from another thread is
     * queued on the connection but not flushed until something else flushes it, so a line could wait for the next.
     */
    private static void write(Context context, HttpServerResponse response, String text) {
        context.runOnContext(v -> {
            if (!response.closed()) {
                response.write(text);
            }
        });
    }

    private static void open(HttpServerResponse response) {
        ConsoleSession.secure(response, false);
        response.setChunked(true).putHeader("Content-Type", "text/event-stream; charset=utf-8")
                .putHeader("X-Accel-Buffering", "no");
        response.write(": gpucloud live output\n\n");
    }

    private static void event(HttpServerResponse response, String name, JsonObject data) {
        response.write("event: " + name + "\ndata: " + data.encode() + "\n\n");
    }
}
