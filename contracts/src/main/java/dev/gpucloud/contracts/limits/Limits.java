package dev.gpucloud.contracts.limits;

import dev.gpucloud.contracts.limits.Limit.Kind;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The one table of input limits: every string, list, map, number and time of the contract has a bound
 * here, and gRPC, REST and every topic check the same one ({@link Check}). The bounds are chosen so that
 * whatever is accepted can be stored, read back and replayed: a field is far below the JSON reader's
 * 64 KiB string limit, and a whole job spec far below the 1 MiB record limit. {@link LimitsDoc} writes
 * this table into docs/api.md and docs/events.md.
 */
public final class Limits {

    /** No time of the contract is earlier than the service's epoch: anything before is a broken clock. */
    public static final Instant EPOCH = Instant.parse("2020-01-01T00:00:00Z");
    /** No stored time is later than this: PostgreSQL, protobuf Timestamps and ISO-8601 all hold it. */
    public static final Instant LATEST = Instant.parse("2200-01-01T00:00:00Z");
    /** How far an event's time may run ahead of the receiver's clock (clock skew between hosts). */
    public static final Duration EVENT_CLOCK_SKEW = Duration.ofHours(1);
    /** How far ahead a job's deadline may lie. */
    public static final Duration DEADLINE_HORIZON = Duration.ofDays(366);

    public static final Limit TENANT = new Limit("tenant", "tenant", Kind.TEXT, 1, 63,
            "a DNS label: `[a-z0-9][a-z0-9-]*`, usable in topic keys, URLs and metric labels");
    public static final Limit ID = new Limit("id", "clientRequestId, jobId, allocationId, nodeId, commandId, ce_id",
            Kind.TEXT, 1, 128, "ids are keys of records, rows and series; a UUID with a prefix fits many times over");
    public static final Limit JOB_NAME = new Limit("job name", "spec.name", Kind.TEXT, 1, 128,
            "shown in listings and logs");
    public static final Limit WORKERS = new Limit("workers", "spec.workers", Kind.NUMBER, 1, 1024,
            "the largest gang a fabric of the fleet could hold");
    public static final Limit GPUS_PER_WORKER = new Limit("GPUs per worker", "spec.gpusPerWorker", Kind.NUMBER, 0, 16,
            "the most GPUs one host has");
    public static final Limit MILLI_GPU = new Limit("milli-GPU", "spec.milliGpu", Kind.NUMBER, 0, 999,
            "a share of one GPU; 1000 and more is whole GPUs");
    public static final Limit MIG_PROFILE = new Limit("MIG profile", "spec.migProfile, sku.migProfile", Kind.TEXT, 0, 32,
            "NVIDIA's profile names (`1g.10gb`, `3g.40gb+me`) are short");
    public static final Limit CPU_MILLIS = new Limit("CPU per worker", "spec.cpuMillisPerWorker, cpuMillis", Kind.NUMBER,
            0, 1_024_000, "1,024 cores in milli-cores: more than any host");
    public static final Limit MEMORY_MIB = new Limit("memory per worker", "spec.memoryMibPerWorker, memoryMib",
            Kind.NUMBER, 0, 16L * 1024 * 1024, "16 TiB in MiB: more than any host");
    public static final Limit MIN_GPU_MEMORY_MIB = new Limit("minimum GPU memory", "spec.minGpuMemoryMib", Kind.NUMBER,
            0, 1024 * 1024, "1 TiB in MiB: more than any GPU");
    public static final Limit GPU_MODELS = new Limit("GPU models", "spec.gpuModels", Kind.LIST, 0, 32,
            "a short allow-list; the catalog has a dozen models");
    public static final Limit GPU_MODEL = new Limit("GPU model", "spec.gpuModels[], sku.gpuModel, gpus[].model",
            Kind.TEXT, 1, 128, "a product name; also a metric label value");
    public static final Limit RUNTIME_ESTIMATE = new Limit("runtime estimate", "spec.runtimeEstimateSeconds",
            Kind.NUMBER, 0, 366L * 24 * 3600, "a year in seconds");
    public static final Limit TIME_LIMIT = new Limit("time limit", "spec.timeLimitSeconds", Kind.NUMBER, 0,
            366L * 24 * 3600, "running time summed over attempts, a year in seconds; 0 means none");
    public static final Limit DEPENDENCIES = new Limit("dependencies", "spec.after", Kind.LIST, 0, 64,
            "jobs or arrays one job runs after; each must exist, in the same tenant, when it is submitted");
    public static final Limit ARRAY_COUNT = new Limit("array elements", "array.count", Kind.NUMBER, 1, 10_000,
            "jobs one submission makes; each is a row, an event and a queue entry");
    public static final Limit ARRAY_PARAMETERS = new Limit("array parameters", "array.parameters", Kind.LIST, 0, 8,
            "dimensions of a grid; their values' product is the element count");
    public static final Limit PRICE_CEILING = new Limit("price ceiling", "spec.priceCeilingMicrosPerHour", Kind.NUMBER,
            0, 1_000_000_000_000L, "a million USD per job-hour in micro-USD: sums of it never overflow a long");
    public static final Limit CHECKPOINT_INTERVAL = new Limit("checkpoint interval", "spec.checkpoint.intervalSeconds",
            Kind.NUMBER, 0, 7L * 24 * 3600, "a week; 0 means never");
    public static final Limit CHECKPOINT_LOCATION = new Limit("checkpoint location",
            "spec.checkpoint.location, checkpointPath, resumeFrom", Kind.TEXT, 0, 2048,
            "a URL or path; travels in every START command and job event");
    public static final Limit COMMAND = new Limit("command", "spec.command", Kind.LIST, 1, 256,
            "argv of one process; the first argument must not be blank");
    public static final Limit COMMAND_ARG = new Limit("command argument", "spec.command[]", Kind.TEXT, 0, 4096,
            "one argument");
    public static final Limit ENV = new Limit("environment", "spec.env", Kind.MAP, 0, 128, "variables of one process");
    public static final Limit SECRET_ENV = new Limit("secret environment", "spec.secretEnv", Kind.MAP, 0, 32,
            "secret variables of one process (API keys, passwords); a name is in env or secretEnv, not both");
    public static final Limit ENV_NAME = new Limit("environment name", "spec.env, spec.secretEnv keys", Kind.TEXT, 1,
            128, "`[A-Za-z_][A-Za-z0-9_]*`");
    public static final Limit ENV_VALUE = new Limit("environment value", "spec.env, spec.secretEnv values", Kind.TEXT,
            0, 4096, "one value");
    public static final Limit SPEC_TEXT = new Limit("job spec text", "spec (all strings together)", Kind.TEXT, 0,
            128 * 1024, "a spec, escaped as JSON (at most 6 bytes a character), stays below the 1 MiB record limit");
    public static final Limit DEADLINE = new Limit("deadline", "spec.deadline", Kind.TIME, 0,
            DEADLINE_HORIZON.toSeconds(), "a deadline is in the future (at submission) and within a year");
    public static final Limit EVENT_TIME = new Limit("event time",
            "occurredAt, from, to, sampledAt, observedAt, issuedAt, raisedAt, since, ce_time", Kind.TIME,
            EPOCH.getEpochSecond() - LATEST.getEpochSecond(), EVENT_CLOCK_SKEW.toSeconds(),
            "not before " + EPOCH + " (the service's epoch) and at most " + EVENT_CLOCK_SKEW.toMinutes()
                    + " min ahead of the receiver's clock (skew); every stored time lies before " + LATEST);
    public static final Limit UNITS = new Limit("units", "units (usage)", Kind.NUMBER, 1, 1024,
            "GPUs (or slices) of one allocation");
    public static final Limit HOSTNAME = new Limit("host name", "hostname", Kind.TEXT, 1, 253,
            "a DNS name; also a metric label value");
    public static final Limit LABEL_TEXT = new Limit("short text", "zone, instanceType, uuid, pciBusId, rdmaFabric, "
            + "migInstanceUuid", Kind.TEXT,
            0, 256, "names of things; several are metric label values");
    public static final Limit GPUS_PER_HOST = new Limit("GPUs of a host", "gpus (inventory, telemetry)", Kind.LIST, 0,
            64, "more than any host");
    public static final Limit SHORT_LIST = new Limit("short list",
            "switchPath, cachedDatasets, migInstances, allocations (telemetry)", Kind.LIST, 0, 1024,
            "bounded by the fleet's geometry");
    public static final Limit DETAIL = new Limit("free text", "detail, cancel reason, catalog note", Kind.TEXT, 0,
            4096, "for people to read; clipped in logs");
    public static final Limit GPU_INDEX = new Limit("GPU index", "gpus[].index, gpuIndex", Kind.NUMBER, 0, 63,
            "a host has at most 64 GPUs");
    public static final Limit XID = new Limit("XID", "xid", Kind.NUMBER, 1, 65_535, "NVIDIA's XID error codes");
    public static final Limit PAGE_SIZE = new Limit("page size", "page_size", Kind.NUMBER, 0, 500,
            "0 means the default (50)");
    public static final Limit PAGE_TOKEN = new Limit("page token", "page_token", Kind.TEXT, 0, 512,
            "an opaque cursor this service issued, with a MAC");
    public static final Limit ADJUSTMENT_AMOUNT = new Limit("adjustment amount", "amountMicros (billing adjustment)",
            Kind.NUMBER, -1_000_000_000_000L, 1_000_000_000_000L, "micro-USD, never 0: up to 1,000,000 USD either way,"
                    + " so micro-USD typed where USD was meant is refused rather than billed");
    public static final Limit ADJUSTMENT_REASON = new Limit("adjustment reason", "reason (billing adjustment)",
            Kind.TEXT, 1, 500, "printed on the tenant's invoice and its CSV; no control or format characters");
    public static final Limit IDEMPOTENCY_KEY = new Limit("idempotency key", "Idempotency-Key (billing adjustment)",
            Kind.TEXT, 1, 128, "letters, digits and . _ : - (a UUID fits); one key is one adjustment, for good");
    public static final Limit RECORD = new Limit("record", "any topic's record value", Kind.TEXT, 0, 1024 * 1024,
            "bytes; refused before parsing");

    private static final List<Limit> ALL = List.of(TENANT, ID, JOB_NAME, WORKERS, GPUS_PER_WORKER, MILLI_GPU,
            MIG_PROFILE, CPU_MILLIS, MEMORY_MIB, MIN_GPU_MEMORY_MIB, GPU_MODELS, GPU_MODEL, RUNTIME_ESTIMATE,
            TIME_LIMIT, DEPENDENCIES, ARRAY_COUNT, ARRAY_PARAMETERS, PRICE_CEILING, CHECKPOINT_INTERVAL, CHECKPOINT_LOCATION, COMMAND, COMMAND_ARG, ENV, SECRET_ENV, ENV_NAME, ENV_VALUE,
            SPEC_TEXT, DEADLINE, EVENT_TIME, UNITS, HOSTNAME, LABEL_TEXT, GPUS_PER_HOST, SHORT_LIST, DETAIL, GPU_INDEX,
            XID, PAGE_SIZE, PAGE_TOKEN, ADJUSTMENT_AMOUNT, ADJUSTMENT_REASON, IDEMPOTENCY_KEY, RECORD);

    private Limits() {
    }

    /** Every limit, in the order the docs list them. */
    public static List<Limit> all() {
        return ALL;
    }
}
