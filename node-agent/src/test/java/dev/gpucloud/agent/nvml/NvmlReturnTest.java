package dev.gpucloud.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every NVML return code becomes a message that names the call, the code and what it means. */
class NvmlReturnTest {

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource({
        "0, NVML_SUCCESS",
        "1, NVML_ERROR_UNINITIALIZED",
        "3, NVML_ERROR_NOT_SUPPORTED",
        "9, NVML_ERROR_DRIVER_NOT_LOADED",
        "13, NVML_ERROR_FUNCTION_NOT_FOUND",
        "15, NVML_ERROR_GPU_IS_LOST",
        "16, NVML_ERROR_RESET_REQUIRED",
        "25, NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
        "28, NVML_ERROR_GPU_NOT_FOUND",
        "999, NVML_ERROR_UNKNOWN",
        "4242, NVML_RETURN_4242",
    })
    void codesHaveTheirNvmlHeaderNames(int code, String name) {
        assertThat(NvmlReturn.name(code)).isEqualTo(name);
    }

    @ParameterizedTest(name = "{0}: gone={1}, not available={2}")
    @CsvSource({
        "15, true, false",
        "16, true, false",
        "28, true, false",
        "3, false, true",
        "13, false, true",
        "4, false, false",
    })
    void aLostGpuAndAMissingReadingAreTellable(int code, boolean gone, boolean notAvailable) {
        NvmlException e = new NvmlException("nvmlDeviceGetPowerUsage", code, "words");
        assertThat(e.gpuGone()).isEqualTo(gone);
        assertThat(e.notAvailable()).isEqualTo(notAvailable);
        assertThat(e.getMessage()).isEqualTo("nvmlDeviceGetPowerUsage failed: " + NvmlReturn.name(code) + " (" + code
                + "): words");
    }

    @ParameterizedTest
    @CsvSource({
        "'', nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9)",
    })
    void aCodeWithoutWordsIsStillNamed(String words, String message) {
        assertThat(new NvmlException("nvmlInit_v2", 9, words).getMessage()).isEqualTo(message);
    }
}
