package dev.gpucloud.metrics.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class GpuFieldTest {

    @Test
    void names_are_dcgm_exporters_field_names() {
        assertThat(Arrays.stream(GpuField.values()).map(GpuField::metricName)).containsExactlyInAnyOrder(
                "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
                "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_TEMP",
                "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_XID_ERRORS",
                "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                "DCGM_FI_PROF_DRAM_ACTIVE");
    }

    @Test
    void every_field_fits_the_presence_bitmask() {
        assertThat(GpuField.values().length).isLessThanOrEqualTo(Long.SIZE);
    }

    @Test
    void a_value_outside_the_fields_physical_range_is_implausible() {
        assertThat(GpuField.GPU_TEMP.isPlausible(64)).isTrue();
        assertThat(GpuField.GPU_TEMP.isPlausible(-5)).as("negative temperature").isFalse();
        assertThat(GpuField.GPU_TEMP.isPlausible(4000)).as("absurd temperature").isFalse();
        assertThat(GpuField.POWER_USAGE.isPlausible(Double.POSITIVE_INFINITY)).isFalse();
        assertThat(GpuField.POWER_USAGE.isPlausible(Double.NaN)).isFalse();
        assertThat(GpuField.PROF_PIPE_TENSOR_ACTIVE.isPlausible(1.5)).as("a ratio above 1").isFalse();
        assertThat(GpuField.FB_USED.isPlausible(80 * 1024)).isTrue();
    }

    @Test
    void help_text_names_the_unit() {
        assertThat(GpuField.FB_USED.help()).contains("MiB");
        assertThat(GpuField.POWER_USAGE.help()).contains("W");
        assertThat(GpuField.TOTAL_ENERGY_CONSUMPTION.help()).contains("mJ");
        assertThat(GpuField.GPU_TEMP.help()).contains("C");
        assertThat(GpuField.SM_CLOCK.help()).contains("MHz");
    }
}
