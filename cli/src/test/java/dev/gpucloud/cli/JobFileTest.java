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
            List.of("command: [x]\narray: {count: 1000000}\n", "line 2", "'array' is not supported yet"),
            List.of("command: [x]\nafter: [{job: j-1, on: success}]\n", "'after' is not supported yet"),
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
    void a_file_that_is_missing_or_too_big_says_so_without_reading_it() throws Exception {
        assertThatThrownBy(() -> JobFile.read(dir.resolve("nope.yaml"))).hasMessageEndingWith("nope.yaml: no such file");
        Path big = write("big.yaml", "command: [x]\n" + "#".repeat((int) JobFile.MAX_BYTES));
        assertThatThrownBy(() -> JobFile.read(big)).hasMessageContaining("a job file is at most 1048576");
    }
}
