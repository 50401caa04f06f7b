package dev.gpucloud.contracts.events;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AllocationIdsTest {

    @ParameterizedTest(name = "{1} of {0}: attempt {2}")
    @CsvSource({
        "job-1, job-1-a1-r0, 1",
        "job-1, job-1-a12-r7, 12",
        "job-1, job-2-a1-r0, 0",
        "job-1, alloc-1, 0",
        "job-1, job-1-a-r0, 0",
        "job-1, job-1-a1-r, 0",
        "job-1, job-1-ax-r0, 0",
        "job-1, job-1-a1-r0x, 0",
        "job-1, job-1-a99999999999-r0, 0",
        "job-1-a1, job-1-a1-a2-r0, 2"})
    void theAttemptIsReadBackFromTheSchedulersIdsOnly(String job, String allocation, int attempt) {
        assertThat(AllocationIds.attempt(job, allocation)).isEqualTo(attempt);
    }

    @ParameterizedTest(name = "job {0}, attempt {1}, rank {2}")
    @CsvSource({"job-1, 1, 0", "job-abc, 3, 15"})
    void anIdReadsBackAsItsAttempt(String job, int attempt, int rank) {
        assertThat(AllocationIds.attempt(job, AllocationIds.of(job, attempt, rank))).isEqualTo(attempt);
    }
}
