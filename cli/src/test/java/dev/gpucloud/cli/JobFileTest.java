package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobFileTest {

    @TempDir
    Path dir;

    static final String FULL = """
            # every field the contract has, in a person's units
            name: llama-ft
            tenant: acme
            request_id: llama-ft-2026-12-07
            workers: 2
            resources:
              gpus: 8
              cpu: 16
              memory: 256Gi
              gpu_models: [A100-SXM4-80GB, H100-SXM5-80GB]
              min_gpu_memory: 80Gi
            interconnect: rdma
            capacity: spot-preferred
            priority: high
            checkpoint: {every: 30m, to: s3://ckpt/llama-ft}
            runtime_estimate: 6h30m
            time_limit: 8h
            deadline: 2026-12-24T18:00:00+01:00
            price_ceiling: 85.5
            env: {EPOCHS: 3, DATASET: "s3://data/alpaca"}
            secret_env: [HF_TOKEN]
            command: [torchrun, --nproc-per-node=8, train.py]
            """;

    JobSpec spec(String name, String text) throws Exception {
        return JobFile.read(write(name, text)).toSpec(Map.of("HF_TOKEN", "hf_x")::get);
    }

    Path write(String name, String text) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    @Test
    void every_field_of_the_contract_is_read_in_its_own_units() throws Exception {
        JobFile job = JobFile.read(write("job.yaml", FULL));
        assertThat(job.tenant()).isEqualTo("acme");
        assertThat(job.requestId()).isEqualTo("llama-ft-2026-12-07");
        JobSpec spec = job.toSpec(Map.of("HF_TOKEN", "hf_x")::get);
        assertThat(spec.getName()).isEqualTo("llama-ft");
        assertThat(spec.getWorkers()).isEqualTo(2);
        assertThat(spec.getGpusPerWorker()).isEqualTo(8);
        assertThat(spec.getCpuMillisPerWorker()).isEqualTo(16_000);
        assertThat(spec.getMemoryMibPerWorker()).isEqualTo(256 * 1024);
        assertThat(spec.getGpuModelsList()).containsExactly("A100-SXM4-80GB", "H100-SXM5-80GB");
        assertThat(spec.getMinGpuMemoryMib()).isEqualTo(80 * 1024);
        assertThat(spec.getInterconnect()).isEqualTo(Interconnect.INTERCONNECT_RDMA);
        assertThat(spec.getCapacity()).isEqualTo(CapacityPreference.CAPACITY_SPOT_PREFERRED);
        assertThat(spec.getPriority()).isEqualTo(PriorityClass.PRIORITY_HIGH);
        assertThat(spec.getCheckpoint().getIntervalSeconds()).isEqualTo(1800);
        assertThat(spec.getCheckpoint().getLocation()).isEqualTo("s3://ckpt/llama-ft");
        assertThat(spec.getRuntimeEstimateSeconds()).isEqualTo(6 * 3600 + 1800);
        assertThat(spec.getTimeLimitSeconds()).isEqualTo(8 * 3600);
        assertThat(spec.getDeadline().getSeconds()).isEqualTo(java.time.Instant.parse("2026-12-24T17:00:00Z")
                .getEpochSecond());
        assertThat(spec.getPriceCeilingMicrosPerHour()).isEqualTo(85_500_000L);
        assertThat(spec.getEnvMap()).containsExactlyInAnyOrderEntriesOf(Map.of("EPOCHS", "3", "DATASET",
                "s3://data/alpaca"));
        assertThat(spec.getSecretEnvMap()).containsExactly(Map.entry("HF_TOKEN", "hf_x"));
        assertThat(spec.getCommandList()).containsExactly("torchrun", "--nproc-per-node=8", "train.py");
    }

    @Test
    void the_same_job_in_json_reads_the_same_and_a_small_file_takes_the_defaults() throws Exception {
        JobSpec json = spec("job.json", """
                {"name": "llama-ft", "workers": 2, "resources": {"gpus": 8, "cpu": "16", "memory": "256Gi",
                 "gpu_models": ["A100-SXM4-80GB", "H100-SXM5-80GB"], "min_gpu_memory": "80Gi"},
                 "interconnect": "RDMA", "capacity": "spot_preferred", "priority": "high",
                 "checkpoint": {"every": 1800, "to": "s3://ckpt/llama-ft"}, "runtime_estimate": "6h30m", "time_limit": 28800,
                 "deadline": "2026-12-24T18:00:00+01:00", "price_ceiling": 85.5,
                 "env": {"EPOCHS": "3", "DATASET": "s3://data/alpaca"}, "secret_env": ["HF_TOKEN"],
                 "command": ["torchrun", "--nproc-per-node=8", "train.py"]}
                """);
        assertThat(json).isEqualTo(spec("job.yaml", FULL));
        JobSpec small = spec("small.yaml", "command: python train.py --epochs 3\n");
        assertThat(small.getCommandList()).containsExactly("/bin/sh", "-c", "python train.py --epochs 3");
        assertThat(small.getName()).isEqualTo("python");
        assertThat(small.getWorkers()).isEqualTo(1);
        assertThat(small.getGpusPerWorker()).isEqualTo(1);
        JobSpec mig = spec("mig.yaml", "resources: {mig: 1g.10gb}\ncommand: [sleep, '5']\n");
        assertThat(mig.getGpusPerWorker()).isZero();
        assertThat(mig.getMigProfile()).isEqualTo("1g.10gb");
        assertThat(spec("share.yaml", "resources: {milli_gpu: 125, cpu: 500m}\ncommand: [x]\n"))
                .satisfies(s -> {
                    assertThat(s.getMilliGpu()).isEqualTo(125);
                    assertThat(s.getCpuMillisPerWorker()).isEqualTo(500);
                });
    }

    /** Each bad file: its text, and the words its one error must have (the line where the file has it). */
    static final List<List<String>> BAD = List.of(
            List.of("name: x\nresources:\n  gpu: 8\ncommand: [x]\n", "line 3, column 3",
                    "unknown field 'gpu' in resources", "gpus", "milli_gpu"),
            List.of("name: x\ngpus: 8\ncommand: [x]\n", "line 2", "unknown field 'gpus'", "resources"),
            List.of("workers: two\ncommand: [x]\n", "line 1", "workers: 'two' is not a whole number"),
            List.of("workers: 2.5\ncommand: [x]\n", "line 1", "workers"),
            List.of("workers: [2]\ncommand: [x]\n", "line 1", "workers: expected a whole number"),
            List.of("command: [x]\nresources: {memory: 64}\n", "line 2", "resources.memory",
                    "'64' is not an amount of memory", "64Gi"),
            List.of("command: [x]\nresources: {memory: 64GB}\n", "resources.memory", "512Mi"),
            List.of("command: [x]\nresources: {cpu: -2}\n", "resources.cpu", "is not a CPU amount"),
            List.of("command: [x]\ninterconnect: infiniband\n", "line 2", "interconnect",
                    "'infiniband' is not one of none, nvlink, rdma"),
            List.of("command: [x]\ncapacity: cheap\n", "capacity", "on-demand, spot, spot-preferred"),
            List.of("command: [x]\ncheckpoint: {every: often}\n", "checkpoint.every", "is not a duration"),
            List.of("command: [x]\nruntime_estimate: 2d\n", "runtime_estimate", "'2d' is not a duration"),
            List.of("command: [x]\ntime_limit: 2d\n", "line 2", "time_limit", "'2d' is not a duration"),
            List.of("command: [x]\ntime_limit: 9000h\n", "line 2", "time_limit", "more than a year"),
            List.of("command: [x]\ntime_limit: 40000000\n", "line 2", "time_limit", "more than a year"),
            List.of("command: [x]\ndeadline: tomorrow\n", "deadline", "'tomorrow' is not a moment"),
            List.of("command: [x]\ndeadline: 2026-12-24T18:00:00\n", "deadline", "with its offset"),
            List.of("command: [x]\nprice_ceiling: -3\n", "price_ceiling", "is not a price"),
            List.of("command: [x]\nprice_ceiling: 0.0000001\n", "price_ceiling", "at most 6 decimals"),
            List.of("command: []\n", "command", "not an empty list"),
            List.of("command: {run: x}\n", "command", "a list of words"),
            List.of("command: [x, [y]]\n", "command", "each word of the command is a string"),
            List.of("env: [A=1]\ncommand: [x]\n", "line 1", "env: expected a mapping of fields"),
            List.of("command: [x]\nworkers: 1\nworkers: 2\n", "line 3", "Duplicate field 'workers'"),
            List.of("command: [x\n", "line"),
            List.of("- command: [x]\n", "line 1", "expected a mapping of fields"),
            List.of("command: [x]\narray: {count: 1000000}\n", "line 2", "array: count is 1000000",
                    "1..10000 elements"),
            List.of("command: [x]\narray: {count: 0}\n", "line 2, column 9", "count is 0"),
            List.of("command: [x]\narray: {count: 2.5}\n", "line 2", "'2.5' is not a whole number"),
            List.of("command: [x]\narray: {}\n", "line 2", "give count"),
            List.of("command: [x]\narray: 16\n", "line 2", "array: expected a mapping"),
            List.of("command: [x]\narray: {size: 4}\n", "line 2", "unknown field 'size' in array",
                    "count, grid"),
            List.of("command: [x]\narray:\n  grid:\n    LR: [1e-3]\n    2LR: [1]\n", "line 5, column 5",
                    "'2LR' is not a variable name"),
            List.of("command: [x]\narray:\n  grid:\n    LR: [1e-3]\n    BATCH: []\n", "line 5",
                    "BATCH has no values"),
            List.of("command: [x]\narray: {grid: {LR: 1e-3}}\n", "line 2", "grid.LR: a list of values"),
            List.of("command: [x]\narray: {grid: {LR: [[1]]}}\n", "line 2", "each value is a string or a number"),
            List.of("command: [x]\narray: {grid: {}}\n", "grid has no parameters"),
            List.of("command: [x]\narray: {grid: {GPUCLOUD_ARRAY_INDEX: [1]}}\n", "gives every element itself (GPUCLOUD_ARRAY_ID"),
            List.of("command: [x]\narray:\n  grid: {A: [1], B: [1], C: [1], D: [1], E: [1], F: [1], G: [1],"
                    + " H: [1], I: [1]}\n", "line 3", "grid has 9 parameters; at most 8"),
            List.of("command: [x]\narray:\n  count: 3\n  grid: {LR: [a, b], B: [1, 2]}\n", "line 3, column 3",
                    "count is 3 but the grid has 4 combinations (2 x 2)"),
            List.of("command: [x]\narray:\n  grid: {A: [1,2,3,4,5,6,7,8,9,10], B: [1,2,3,4,5,6,7,8,9,10],"
                    + " C: [1,2,3,4,5,6,7,8,9,10], D: [1,2,3,4,5,6,7,8,9,10], E: [1,2]}\n",
                    "more than 10000 combinations (10 x 10 x 10 x 10 x 2); an array has at most 10000 elements"),
            List.of("command: [x]\nafter: [{job: j-1, on: maybe}]\n", "line 2", "on: 'maybe' is not one of success,"
                    + " any"),
            List.of("command: [x]\nafter:\n  - job-1\n  - {id: job-2}\n", "line 4, column 6",
                    "unknown field 'id' in after (fields there: job, on)"),
            List.of("command: [x]\nafter: [{on: any}]\n", "line 2", "an entry without job"),
            List.of("command: [x]\nafter: [[job-1]]\n", "line 2", "each entry is a job's id"),
            List.of("command: [x]\nafter: job-1\n", "line 2", "after: expected a list"),
            List.of("command: [x]\nafter: [\"\"]\n", "an empty job id"),
            List.of("command: [x]\nafter: [" + "job-1, ".repeat(65) + "job-1]\n", "after: at most 64 jobs, has 66"),
            List.of("name: x\n", "command: every job has one"),
            List.of("workers: 0\ncommand: [x]\n", "workers: at least 1, is 0"),
            List.of("resources: {milli_gpu: 1000}\ncommand: [x]\n", "resources.milli_gpu: 1..999"),
            List.of("secret_env: [NOT_SET_ANYWHERE]\ncommand: [x]\n", "your environment has no variable NOT_SET_ANYWHERE"),
            List.of("secret_env: [\"a b\"]\ncommand: [x]\n", "secret_env: a list of variable names"),
            List.of("env: {A: }\ncommand: [x]\n", "env.A: no value"),
            List.of("   \n", "empty"));

    @Test
    void every_mistake_is_one_error_naming_the_field_and_where_the_file_has_it() throws Exception {
        List<String> wrong = new java.util.ArrayList<>();
        for (List<String> bad : BAD) {
            Path file = write("bad.yaml", bad.get(0));
            String message;
            try {
                JobFile.read(file).toSpec(Map.<String, String>of()::get);
                wrong.add(bad.get(0) + " -> accepted");
                continue;
            } catch (JobFile.Invalid e) {
                message = e.getMessage();
            }
            boolean ok = !message.contains("\n") && !message.contains("com.fasterxml") && !message.contains("dev.gpucloud")
                    && bad.subList(1, bad.size()).stream().allMatch(message::contains);
            if (!ok) {
                wrong.add(bad.get(0).replace("\n", "\\n") + " -> " + message);
            }
        }
        assertThat(wrong).as("files whose error does not say what the list expects").isEmpty();
    }

    @Test
    void an_array_is_a_count_or_a_grid_whose_values_are_the_text_the_file_writes() throws Exception {
        JobFile counted = JobFile.read(write("a.yaml", "command: [x]\narray: {count: 64}\n"));
        assertThat(counted.array().value().getCount()).isEqualTo(64);
        assertThat(counted.array().value().getParametersList()).isEmpty();
        JobFile grid = JobFile.read(write("g.yaml", """
                command: [python, train.py]
                array:
                  grid:
                    LR: ["1e-3", 1e-4, 0.5]
                    BATCH: [32, 64]
                    OPT: [adam]
                """));
        dev.gpucloud.contracts.grpc.v1.JobArray array = grid.array().value();
        assertThat(array.getCount()).as("the product").isEqualTo(6);
        assertThat(array.getParametersList()).extracting(p -> p.getName()).containsExactly("LR", "BATCH", "OPT");
        assertThat(array.getParameters(0).getValuesList()).containsExactly("1e-3", "1e-4", "0.5");
        assertThat(array.getParameters(1).getValuesList()).containsExactly("32", "64");
        JobFile both = JobFile.read(write("b.json", "{\"command\": [\"x\"], \"array\": {\"count\": 2,"
                + " \"grid\": {\"LR\": [1e-3, 0.1]}}}"));
        assertThat(both.array().value().getParameters(0).getValuesList()).containsExactly("1e-3", "0.1");
    }

    @Test
    void after_takes_ids_alone_or_with_the_end_it_waits_for() throws Exception {
        JobSpec spec = spec("after.yaml", """
                command: [x]
                after:
                  - job-abc
                  - {job: arr-0123456789ab, on: any}
                  - {job: job-def, on: success}
                """);
        assertThat(spec.getAfterList()).extracting(d -> d.getJobId() + "/" + d.getOn()).containsExactly(
                "job-abc/AFTER_SUCCESS", "arr-0123456789ab/AFTER_ANY", "job-def/AFTER_SUCCESS");
    }

    @Test
    void a_file_that_is_missing_or_too_big_says_so_without_reading_it() throws Exception {
        assertThatThrownBy(() -> JobFile.read(dir.resolve("nope.yaml"))).hasMessageEndingWith("nope.yaml: no such file");
        Path big = write("big.yaml", "command: [x]\n" + "#".repeat((int) JobFile.MAX_BYTES));
        assertThatThrownBy(() -> JobFile.read(big)).hasMessageContaining("a job file is at most 1048576");
    }
}
