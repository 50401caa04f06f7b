package dev.gpucloud.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** nvidia-smi's CSV: values in the query's units, "[N/A]" and "[Not Supported]" as null, bad lines named. */
class NvidiaSmiCsvTest {

    static final String H100 = "0, GPU-aaaa, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559, 1000, 80047, 40, 20, 55,"
            + " 250.50, 1980, 2619";

    @Test
    void aFullLineReadsEveryField() {
        NvidiaSmiCsv.Parsed parsed = NvidiaSmiCsv.parse(H100 + "\n");

        assertThat(parsed.problems()).isEmpty();
        assertThat(parsed.rows()).containsExactly(new NvidiaSmiCsv.Row(0, "GPU-aaaa", "NVIDIA H100 80GB HBM3",
                "00000000:18:00.0", 81559L, 1000L, 80047L, 40.0, 20.0, 55, 250.5, 1980, 2619));
    }

    @Test
    void notAvailableAndNotSupportedAreNull() {
        NvidiaSmiCsv.Row row = NvidiaSmiCsv.parse("1, GPU-bbbb, NVIDIA A100-SXM4-40GB, 00000000:2A:00.0, 40960, 0,"
                + " 40960, [N/A], [N/A], 31, [Not Supported], N/A, [N/A]").rows().get(0);

        assertThat(row.utilizationGpu()).isNull();
        assertThat(row.utilizationMemory()).isNull();
        assertThat(row.powerWatts()).isNull();
        assertThat(row.smClockMhz()).isNull();
        assertThat(row.memClockMhz()).isNull();
        assertThat(row.temperatureC()).isEqualTo(31);
    }

    @Test
    void malformedLinesAreSkippedAndReportedWithTheirLineNumbers() {
        NvidiaSmiCsv.Parsed parsed = NvidiaSmiCsv.parse(String.join("\n", List.of(
                H100,
                "1, GPU-bbbb, truncated",
                "2, GPU-cccc, NVIDIA A10G, 00000000:3A:00.0, lots, 1, 1, 1, 1, 1, 1, 1, 1",
                "",
                "[N/A], GPU-dddd, NVIDIA A10G, 00000000:4A:00.0, 1, 1, 1, 1, 1, 1, 1, 1, 1",
                H100.replace("0, GPU-aaaa", "5, GPU-eeee"))));

        assertThat(parsed.rows()).extracting(NvidiaSmiCsv.Row::index).containsExactly(0, 5);
        assertThat(parsed.problems()).containsExactly(
                "line 2: expected 13 fields, got 3: 1, GPU-bbbb, truncated",
                "line 3: memory.total is not a number (lots): 2, GPU-cccc, NVIDIA A10G, 00000000:3A:00.0, lots, 1, 1,"
                        + " 1, 1, 1, 1, 1, 1",
                "line 5: index, uuid and name are required: [N/A], GPU-dddd, NVIDIA A10G, 00000000:4A:00.0, 1, 1, 1,"
                        + " 1, 1, 1, 1, 1, 1");
    }

    @Test
    void emptyOutputIsNoGpusAndNoProblem() {
        assertThat(NvidiaSmiCsv.parse("")).isEqualTo(new NvidiaSmiCsv.Parsed(List.of(), List.of()));
    }
}
