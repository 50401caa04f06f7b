package dev.gpucloud.cli;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every unary call the CLI makes waits at most this long for its answer; a call that runs out says which call it was
 * and how long it waited, so the user reads "GetJob got no answer within 15s" rather than a bare DEADLINE_EXCEEDED.
 * Streams (WatchJob, StreamLogs) are left without one: they are meant to stay open. A call that already carries a
 * deadline keeps it.
 */
final class RpcDeadline implements ClientInterceptor {

    /** What --request-timeout is when neither it nor GPUCLOUD_REQUEST_TIMEOUT is given. */
    static final String DEFAULT = "15s";
    /** The longest deadline one may ask for. */
    static final Duration LONGEST = Duration.ofHours(1);
    private static final Pattern TEXT = Pattern.compile("(\\d{1,7}(?:\\.\\d{1,3})?)(ms|s|m|h)?");

    private final Duration deadline;

    RpcDeadline(Duration deadline) {
        this.deadline = deadline;
    }

    /** 500ms, 15s, 2m, 1h, or a bare number of seconds (1.5); more than zero and at most an hour. */
    static Duration parse(String text) {
        Matcher m = TEXT.matcher(text == null ? "" : text.strip().toLowerCase(Locale.ROOT));
        if (m.matches()) {
            double n = Double.parseDouble(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            double millis = switch (unit) {
                case "ms" -> n;
                case "m" -> n * 60_000;
                case "h" -> n * 3_600_000;
                default -> n * 1000;
            };
            Duration d = Duration.ofMillis((long) millis);
            if (!d.isZero() && d.compareTo(LONGEST) <= 0) {
                return d;
            }
        }
        throw new IllegalArgumentException("must be a duration more than 0 and at most 1h such as 500ms, 15s or 2m,"
                + " was '" + GpucloudCli.clip(String.valueOf(text), 40) + "'");
    }

    /** "15s", "1.5s", "500ms", "2m": as a person would have typed it. */
    static String words(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (method.getType() != MethodDescriptor.MethodType.UNARY || options.getDeadline() != null) {
            return next.newCall(method, options);
        }
        ClientCall<Q, R> call = next.newCall(method, options.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS));
        String name = method.getBareMethodName();
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        Status said = status.getCode() != Status.Code.DEADLINE_EXCEEDED ? status
                                : Status.DEADLINE_EXCEEDED.withDescription(name + " got no answer within "
                                        + words(deadline) + (name.equals("SubmitJob") ? " (it may still be accepted:"
                                        + " submitting again with the same --request-id never makes a second job)"
                                        : "")).withCause(status.getCause());
                        super.onClose(said, trailers);
                    }
                }, headers);
            }
        };
    }
}
