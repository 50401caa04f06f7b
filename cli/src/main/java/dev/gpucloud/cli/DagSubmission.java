package dev.gpucloud.cli;

import dev.gpucloud.contracts.grpc.v1.Dependency;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Submits a DAG file's jobs in {@link DagFile#order}, each naming the ids that those before it got. Every job's
 * request id is the file's plus its name, so the same command run again after a failure part-way gets the jobs
 * already accepted back (the scheduler answers a repeat with the first job) and goes on from there.
 */
final class DagSubmission {

    /** Request ids are keys of at most this many characters; an array's, of at most {@link #ARRAY_ID_MAX}. */
    static final int ID_MAX = 128;
    static final int ARRAY_ID_MAX = 100;

    private DagSubmission() {
    }

    /** One job (or array) the scheduler accepted, under the file's name for it. */
    record Submitted(String name, String requestId, SubmitJobResponse response) {
        /** The id its dependents name: the array's for an array, else the job's. */
        String id() {
            return response.getArrayId().isEmpty() ? response.getJob().getJobId() : response.getArrayId();
        }
    }

    /** The call that sends one request (the scheduler's SubmitJob). */
    interface Sender {
        SubmitJobResponse send(SubmitJobRequest request);
    }

    /** A submission that failed part-way: how many were accepted, and the scheduler's error. */
    static final class Stopped extends RuntimeException {
        final StatusRuntimeException cause;
        final String job;
        final int accepted;

        Stopped(String job, int accepted, StatusRuntimeException cause) {
            super(cause.getMessage(), cause);
            this.cause = cause;
            this.job = job;
            this.accepted = accepted;
        }
    }

    /** {@code base/name}, or a digest of both where that is longer than a request id may be. */
    static String requestId(String base, String name, boolean array) {
        String id = base + "/" + name;
        if (id.length() <= (array ? ARRAY_ID_MAX : ID_MAX)) {
            return id;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest((base + "\n" + name)
                    .getBytes(StandardCharsets.UTF_8));
            return "dag-" + HexFormat.of().formatHex(digest).substring(0, 40);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Submits every job of {@code order}; {@code each} hears of each as it is accepted. Every spec is built before
     * the first is sent, so a mistake in the last job sends nothing.
     */
    static List<Submitted> submit(String tenant, String base, List<DagFile.Node> order,
            Function<String, String> environment, Sender sender, Consumer<Submitted> each) throws JobFile.Invalid {
        List<JobSpec> specs = new ArrayList<>();
        for (DagFile.Node node : order) {
            try {
                specs.add(node.job().toSpec(environment));
            } catch (JobFile.Invalid e) {
                throw new JobFile.Invalid("jobs[" + node.index() + "] (" + node.name() + "): " + e.getMessage());
            }
        }
        Map<String, String> ids = new HashMap<>();
        List<Submitted> done = new ArrayList<>();
        for (int i = 0; i < order.size(); i++) {
            DagFile.Node node = order.get(i);
            JobSpec.Builder spec = specs.get(i).toBuilder();
            for (int d = 0; d < spec.getAfterCount(); d++) {
                Dependency dep = spec.getAfter(d);
                if (node.needs().contains(dep.getJobId())) {
                    spec.setAfter(d, dep.toBuilder().setJobId(ids.get(dep.getJobId())));
                }
            }
            boolean array = node.job().array() != null;
            SubmitJobRequest.Builder request = SubmitJobRequest.newBuilder().setTenant(tenant)
                    .setClientRequestId(requestId(base, node.name(), array)).setSpec(spec);
            if (array) {
                request.setArray(node.job().array().value());
            }
            SubmitJobResponse response;
            try {
                response = sender.send(request.build());
            } catch (StatusRuntimeException e) {
                throw new Stopped(node.name(), done.size(), e);
            }
            Submitted s = new Submitted(node.name(), request.getClientRequestId(), response);
            ids.put(node.name(), s.id());
            done.add(s);
            each.accept(s);
        }
        return done;
    }
}
