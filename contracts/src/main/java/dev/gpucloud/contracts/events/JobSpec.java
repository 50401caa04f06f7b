package dev.gpucloud.contracts.events;

import dev.gpucloud.geometry.MigProfileName;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;

/**
 * What a job asks for: {@code workers} workers, each with whole GPUs ({@code gpusPerWorker}), one
 * MIG slice ({@code migProfile}) or a share of one GPU ({@code milliGpu}): exactly one of the three.
 * Money is in micro-USD. The constructor rejects anything a scheduler could not act on, naming the
 * field ("spec.workers").
 *
 * <p>{@code secretEnv} holds variables whose values only the worker may see (API keys, passwords): they travel
 * to the agent that runs the worker and nowhere else, and {@link #toString()} and {@link #redacted()} show
 * their names only. A name is in {@code env} or in {@code secretEnv}, never both.
 */
public record JobSpec(
        String name,
        int workers,
        int gpusPerWorker,
        String migProfile,
        int milliGpu,
        int cpuMillisPerWorker,
        long memoryMibPerWorker,
        List<String> gpuModels,
        long minGpuMemoryMib,
        Interconnect interconnect,
        CapacityPreference capacity,
        PriorityClass priority,
        CheckpointPolicy checkpoint,
        long runtimeEstimateSeconds,
        Instant deadline,
        long priceCeilingMicrosPerHour,
        List<String> command,
        Map<String, String> env,
        Map<String, String> secretEnv,
        long timeLimitSeconds,
        List<Dependency> after) {

    /**
     * A job this one runs after: {@code jobId} names a job or a job array of the same tenant; with {@code onAny}
     * any end of it will do, otherwise it must succeed.
     */
    public record Dependency(String jobId, boolean onAny) {

        public Dependency {
            Check.text(jobId, Limits.ID, "spec.after[].jobId");
        }
    }

    /**
     * How a secret value the scheduler sealed before storing it begins (its SecretSeal); a submitted secret may not,
     * or it would be taken for a sealed one when the stored spec is read back.
     */
    public static final String SEALED_PREFIX = "gpucloud:sealed:";

    /**
     * How a secret value sealed for one node agent begins (in a START, {@code AgentSeal}); a submitted secret may not,
     * or the agent would take it for a sealed one that does not open, and fail the job's workers.
     */
    public static final String AGENT_SEALED_PREFIX = "gpucloud:agent-sealed:";

    /** What a secret value reads as wherever a spec is shown (GetJob, ListJobs, logs). */
    public static final String REDACTED = "(secret)";

    public static final int MAX_WORKERS = (int) Limits.WORKERS.max();
    public static final int MAX_GPUS_PER_WORKER = (int) Limits.GPUS_PER_WORKER.max();
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * Every bound of {@link Limits} that does not depend on the clock; the deadline's distance from now is
     * checked where a spec is submitted ({@link #requireDeadlineAhead}), so a stored spec always reads back.
     */
    public JobSpec {
        Check.text(name, Limits.JOB_NAME, "spec.name");
        Check.number(workers, Limits.WORKERS, "spec.workers");
        if (migProfile != null && migProfile.isBlank()) {
            migProfile = null;
        }
        int shapes = (gpusPerWorker > 0 ? 1 : 0) + (migProfile != null ? 1 : 0) + (milliGpu > 0 ? 1 : 0);
        if (shapes != 1) {
            throw new IllegalArgumentException(
                    "field 'spec.gpusPerWorker': set exactly one of gpusPerWorker, migProfile and milliGpu");
        }
        Check.number(gpusPerWorker, Limits.GPUS_PER_WORKER, "spec.gpusPerWorker");
        Check.optionalText(migProfile, Limits.MIG_PROFILE, "spec.migProfile");
        if (migProfile != null && MigProfileName.tryParse(migProfile).isEmpty()) {
            throw new IllegalArgumentException(
                    "field 'spec.migProfile' must look like 1g.10gb or 1g.10gb+me, was '" + clip(migProfile) + "'");
        }
        Check.number(milliGpu, Limits.MILLI_GPU, "spec.milliGpu");
        Check.number(cpuMillisPerWorker, Limits.CPU_MILLIS, "spec.cpuMillisPerWorker");
        Check.number(memoryMibPerWorker, Limits.MEMORY_MIB, "spec.memoryMibPerWorker");
        gpuModels = Require.list(gpuModels, "spec.gpuModels");
        Check.size(gpuModels, Limits.GPU_MODELS, "spec.gpuModels");
        for (int i = 0; i < gpuModels.size(); i++) {
            Check.text(gpuModels.get(i), Limits.GPU_MODEL, "spec.gpuModels[" + i + "]");
        }
        Check.number(minGpuMemoryMib, Limits.MIN_GPU_MEMORY_MIB, "spec.minGpuMemoryMib");
        interconnect = interconnect == null ? Interconnect.NONE : interconnect;
        capacity = capacity == null ? CapacityPreference.ON_DEMAND : capacity;
        priority = priority == null ? PriorityClass.NORMAL : priority;
        checkpoint = checkpoint == null ? CheckpointPolicy.NONE : checkpoint;
        Check.number(runtimeEstimateSeconds, Limits.RUNTIME_ESTIMATE, "spec.runtimeEstimateSeconds");
        Check.number(priceCeilingMicrosPerHour, Limits.PRICE_CEILING, "spec.priceCeilingMicrosPerHour");
        command = Require.list(command, "spec.command");
        Check.size(command, Limits.COMMAND, "spec.command");
        long chars = name.length() + (checkpoint.location() == null ? 0 : checkpoint.location().length());
        for (int i = 0; i < command.size(); i++) {
            chars += Check.optionalText(command.get(i), Limits.COMMAND_ARG, "spec.command[" + i + "]").length();
        }
        if (command.get(0).isBlank()) {
            throw new IllegalArgumentException("field 'spec.command[0]' (the program) must not be blank");
        }
        env = Require.map(env, "spec.env");
        Check.size(env, Limits.ENV, "spec.env");
        for (Map.Entry<String, String> e : env.entrySet()) {
            Check.text(e.getKey(), Limits.ENV_NAME, "spec.env");
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new IllegalArgumentException("field 'spec.env' has an invalid name '" + clip(e.getKey()) + "'");
            }
            chars += e.getKey().length()
                    + Check.optionalText(e.getValue(), Limits.ENV_VALUE, "spec.env[" + e.getKey() + "]").length();
        }
        secretEnv = Require.map(secretEnv, "spec.secretEnv");
        Check.size(secretEnv, Limits.SECRET_ENV, "spec.secretEnv");
        for (Map.Entry<String, String> e : secretEnv.entrySet()) {
            Check.text(e.getKey(), Limits.ENV_NAME, "spec.secretEnv");
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new IllegalArgumentException("field 'spec.secretEnv' has an invalid name '" + clip(e.getKey())
                        + "'");
            }
            if (env.containsKey(e.getKey())) {
                throw new IllegalArgumentException("field 'spec.secretEnv' names '" + e.getKey()
                        + "', which spec.env also sets: a variable is either secret or not");
            }
            // the value is never quoted back: only its length
            String value = e.getValue();
            if (value.length() > Limits.ENV_VALUE.max()) {
                throw new IllegalArgumentException("field 'spec.secretEnv[" + e.getKey() + "]' holds "
                        + value.length() + " characters, over the limit of " + Limits.ENV_VALUE.max());
            }
            if (value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("field 'spec.secretEnv[" + e.getKey()
                        + "]' holds a NUL character");
            }
            if (value.startsWith(SEALED_PREFIX)) {
                throw new IllegalArgumentException("field 'spec.secretEnv[" + e.getKey() + "]' begins with '"
                        + SEALED_PREFIX + "', which marks a value the scheduler sealed at rest: it could not be told"
                        + " apart when read back");
            }
            if (value.startsWith(AGENT_SEALED_PREFIX)) {
                throw new IllegalArgumentException("field 'spec.secretEnv[" + e.getKey() + "]' begins with '"
                        + AGENT_SEALED_PREFIX + "', which marks a value sealed for a node agent: the agent could not"
                        + " tell it apart");
            }
            chars += e.getKey().length() + value.length();
        }
        for (String model : gpuModels) {
            chars += model.length();
        }
        if (chars > Limits.SPEC_TEXT.max()) {
            throw new IllegalArgumentException("field 'spec' holds " + chars + " characters of text, over the limit of "
                    + Limits.SPEC_TEXT.max());
        }
        Check.number(timeLimitSeconds, Limits.TIME_LIMIT, "spec.timeLimitSeconds");
        after = after == null ? List.of() : List.copyOf(after); // a spec stored before dependencies has none
        Check.size(after, Limits.DEPENDENCIES, "spec.after");
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < after.size(); i++) {
            Dependency d = after.get(i);
            if (d == null) {
                throw new IllegalArgumentException("field 'spec.after[" + i + "]' must not be null");
            }
            if (!seen.add(d.jobId())) {
                throw new IllegalArgumentException("field 'spec.after' names job '" + clip(d.jobId()) + "' twice");
            }
        }
        if (interconnect == Interconnect.NVLINK && gpusPerWorker < 2) {
            throw new IllegalArgumentException("field 'spec.interconnect' NVLINK needs gpusPerWorker >= 2");
        }
    }

    /** A spec without secret variables (as every spec was before they existed). */
    public JobSpec(String name, int workers, int gpusPerWorker, String migProfile, int milliGpu,
            int cpuMillisPerWorker, long memoryMibPerWorker, List<String> gpuModels, long minGpuMemoryMib,
            Interconnect interconnect, CapacityPreference capacity, PriorityClass priority,
            CheckpointPolicy checkpoint, long runtimeEstimateSeconds, Instant deadline,
            long priceCeilingMicrosPerHour, List<String> command, Map<String, String> env) {
        this(name, workers, gpusPerWorker, migProfile, milliGpu, cpuMillisPerWorker, memoryMibPerWorker, gpuModels,
                minGpuMemoryMib, interconnect, capacity, priority, checkpoint, runtimeEstimateSeconds, deadline,
                priceCeilingMicrosPerHour, command, env, Map.of());
    }

    /** A spec without a time limit or dependencies (as every spec was before they existed). */
    public JobSpec(String name, int workers, int gpusPerWorker, String migProfile, int milliGpu,
            int cpuMillisPerWorker, long memoryMibPerWorker, List<String> gpuModels, long minGpuMemoryMib,
            Interconnect interconnect, CapacityPreference capacity, PriorityClass priority,
            CheckpointPolicy checkpoint, long runtimeEstimateSeconds, Instant deadline,
            long priceCeilingMicrosPerHour, List<String> command, Map<String, String> env,
            Map<String, String> secretEnv) {
        this(name, workers, gpusPerWorker, migProfile, milliGpu, cpuMillisPerWorker, memoryMibPerWorker, gpuModels,
                minGpuMemoryMib, interconnect, capacity, priority, checkpoint, runtimeEstimateSeconds, deadline,
                priceCeilingMicrosPerHour, command, env, secretEnv, 0, List.of());
    }

    /** The same spec with {@code extra} added to its variables (an array element's): a name may not be set twice. */
    public JobSpec withEnv(Map<String, String> extra) {
        Map<String, String> merged = new java.util.LinkedHashMap<>(env);
        for (Map.Entry<String, String> e : extra.entrySet()) {
            if (merged.putIfAbsent(e.getKey(), e.getValue()) != null || secretEnv.containsKey(e.getKey())) {
                throw new IllegalArgumentException("field 'spec.env' sets '" + clip(e.getKey())
                        + "', which the array sets for each element");
            }
        }
        return new JobSpec(name, workers, gpusPerWorker, migProfile, milliGpu, cpuMillisPerWorker,
                memoryMibPerWorker, gpuModels, minGpuMemoryMib, interconnect, capacity, priority, checkpoint,
                runtimeEstimateSeconds, deadline, priceCeilingMicrosPerHour, command, merged, secretEnv,
                timeLimitSeconds, after);
    }

    /** The same spec with every secret value replaced by {@link #REDACTED}: what may be shown to anyone. */
    public JobSpec redacted() {
        return new JobSpec(name, workers, gpusPerWorker, migProfile, milliGpu, cpuMillisPerWorker,
                memoryMibPerWorker, gpuModels, minGpuMemoryMib, interconnect, capacity, priority, checkpoint,
                runtimeEstimateSeconds, deadline, priceCeilingMicrosPerHour, command, env, redact(secretEnv),
                timeLimitSeconds, after);
    }

    /** {@code secret} with every value replaced by {@link #REDACTED}, in the order of its names. */
    public static Map<String, String> redact(Map<String, String> secret) {
        Map<String, String> shown = new java.util.TreeMap<>();
        secret.keySet().forEach(k -> shown.put(k, REDACTED));
        return shown;
    }

    /** The record's text with the secret values redacted: a spec in a log line or an exception shows none. */
    @Override
    public String toString() {
        return "JobSpec[name=" + name + ", workers=" + workers + ", gpusPerWorker=" + gpusPerWorker
                + ", migProfile=" + migProfile + ", milliGpu=" + milliGpu + ", cpuMillisPerWorker="
                + cpuMillisPerWorker + ", memoryMibPerWorker=" + memoryMibPerWorker + ", gpuModels=" + gpuModels
                + ", minGpuMemoryMib=" + minGpuMemoryMib + ", interconnect=" + interconnect + ", capacity="
                + capacity + ", priority=" + priority + ", checkpoint=" + checkpoint + ", runtimeEstimateSeconds="
                + runtimeEstimateSeconds + ", deadline=" + deadline + ", priceCeilingMicrosPerHour="
                + priceCeilingMicrosPerHour + ", command=" + command + ", env=" + env + ", secretEnv="
                + redact(secretEnv) + ", timeLimitSeconds=" + timeLimitSeconds + ", after=" + after + "]";
    }

    /** At submission: the deadline, if any, must lie ahead of {@code now}, within the horizon of the limits table. */
    public JobSpec requireDeadlineAhead(Instant now) {
        Check.deadline(deadline, now, "spec.deadline");
        return this;
    }

    /** GPUs (whole or not) each worker needs, in milli-GPUs. */
    public int milliGpusPerWorker() {
        if (gpusPerWorker > 0) {
            return gpusPerWorker * Sku.WHOLE_GPU;
        }
        return milliGpu > 0 ? milliGpu : Sku.WHOLE_GPU;
    }

    static String clip(String text) {
        return Check.clip(text);
    }
}
