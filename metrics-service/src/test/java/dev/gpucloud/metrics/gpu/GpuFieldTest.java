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
                "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK");
    }

    @Test
    void every_field_fits_the_presence_bitmask() {
        assertThat(GpuField.values().length).isLessThanOrEqualTo(Long.SIZE);
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
