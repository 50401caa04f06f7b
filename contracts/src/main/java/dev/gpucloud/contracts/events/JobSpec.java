package dev.gpucloud.contracts.events;

import dev.gpucloud.geometry.MigProfileName;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What a job asks for: {@code workers} workers, each with whole GPUs ({@code gpusPerWorker}), one
 * MIG slice ({@code migProfile}) or a share of one GPU ({@code milliGpu}): exactly one of the three.
 * Money is in micro-USD. The constructor rejects anything a scheduler could not act on, naming the
 * field ("spec.workers").
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
        Map<String, String> env) {

    public static final int MAX_WORKERS = 1024;
    public static final int MAX_GPUS_PER_WORKER = 16;
    public static final int MAX_COMMAND_ARGS = 256;
    public static final int MAX_TEXT = 4096;
    public static final int MAX_ENV = 128;
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

    public JobSpec {
        Require.text(name, "spec.name");
        if (name.length() > 128) {
            throw new IllegalArgumentException("field 'spec.name' must be at most 128 characters");
        }
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new IllegalArgumentException(
                    "field 'spec.workers' must be within 1.." + MAX_WORKERS + ", was " + workers);
        }
        if (migProfile != null && migProfile.isBlank()) {
            migProfile = null;
        }
        int shapes = (gpusPerWorker > 0 ? 1 : 0) + (migProfile != null ? 1 : 0) + (milliGpu > 0 ? 1 : 0);
        if (shapes != 1) {
            throw new IllegalArgumentException(
                    "field 'spec.gpusPerWorker': set exactly one of gpusPerWorker, migProfile and milliGpu");
        }
        if (gpusPerWorker < 0 || gpusPerWorker > MAX_GPUS_PER_WORKER) {
            throw new IllegalArgumentException(
                    "field 'spec.gpusPerWorker' must be within 0.." + MAX_GPUS_PER_WORKER + ", was " + gpusPerWorker);
        }
        if (migProfile != null && MigProfileName.tryParse(migProfile).isEmpty()) {
            throw new IllegalArgumentException(
                    "field 'spec.migProfile' must look like 1g.10gb or 1g.10gb+me, was '" + clip(migProfile) + "'");
        }
        if (milliGpu < 0 || milliGpu >= Sku.WHOLE_GPU) {
            throw new IllegalArgumentException("field 'spec.milliGpu' must be within 1..999, was " + milliGpu);
        }
        Require.atLeast(cpuMillisPerWorker, 0, "spec.cpuMillisPerWorker");
        Require.atLeast(memoryMibPerWorker, 0, "spec.memoryMibPerWorker");
        gpuModels = Require.list(gpuModels, "spec.gpuModels");
        for (String model : gpuModels) {
            if (model.isBlank() || model.length() > 128) {
                throw new IllegalArgumentException("field 'spec.gpuModels' has an empty or over-long model name");
            }
        }
        Require.atLeast(minGpuMemoryMib, 0, "spec.minGpuMemoryMib");
        interconnect = interconnect == null ? Interconnect.NONE : interconnect;
        capacity = capacity == null ? CapacityPreference.ON_DEMAND : capacity;
        priority = priority == null ? PriorityClass.NORMAL : priority;
        checkpoint = checkpoint == null ? CheckpointPolicy.NONE : checkpoint;
        Require.atLeast(runtimeEstimateSeconds, 0, "spec.runtimeEstimateSeconds");
        Require.atLeast(priceCeilingMicrosPerHour, 0, "spec.priceCeilingMicrosPerHour");
        command = Require.list(command, "spec.command");
        if (command.isEmpty()) {
            throw new IllegalArgumentException("field 'spec.command' must not be empty");
        }
        if (command.size() > MAX_COMMAND_ARGS) {
            throw new IllegalArgumentException("field 'spec.command' has more than " + MAX_COMMAND_ARGS + " arguments");
        }
        for (String arg : command) {
            if (arg.length() > MAX_TEXT || arg.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("field 'spec.command' has an argument over "
                        + MAX_TEXT + " characters or with a NUL byte");
            }
        }
        env = Require.map(env, "spec.env");
        if (env.size() > MAX_ENV) {
            throw new IllegalArgumentException("field 'spec.env' has more than " + MAX_ENV + " entries");
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new IllegalArgumentException("field 'spec.env' has an invalid name '" + clip(e.getKey()) + "'");
            }
            if (e.getValue().length() > MAX_TEXT || e.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("field 'spec.env' value of '" + e.getKey()
                        + "' is over " + MAX_TEXT + " characters or has a NUL byte");
            }
        }
        if (interconnect == Interconnect.NVLINK && gpusPerWorker < 2) {
            throw new IllegalArgumentException("field 'spec.interconnect' NVLINK needs gpusPerWorker >= 2");
        }
    }

    /** GPUs (whole or not) each worker needs, in milli-GPUs. */
    public int milliGpusPerWorker() {
        if (gpusPerWorker > 0) {
            return gpusPerWorker * Sku.WHOLE_GPU;
        }
        return milliGpu > 0 ? milliGpu : Sku.WHOLE_GPU;
    }

    static String clip(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
