package dev.gpucloud.contracts.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jboss.logging.MDC;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LogFieldsTest {

    @AfterEach
    void clear() {
        MDC.clear();
    }

    @Test
    void fields_hold_inside_their_scope_and_a_nested_scope_gives_back_the_outer_values() {
        try (LogFields host = LogFields.of(LogFields.NODE_ID, "a100-3")) {
            assertThat(MDC.get("node_id")).isEqualTo("a100-3");
            try (LogFields job = LogFields.of(LogFields.JOB_ID, "job-1", LogFields.NODE_ID, "a100-4")) {
                assertThat(MDC.get("job_id")).isEqualTo("job-1");
                assertThat(MDC.get("node_id")).isEqualTo("a100-4");
            }
            assertThat(MDC.get("job_id")).isNull();
            assertThat(MDC.get("node_id")).isEqualTo("a100-3");
        }
        assertThat(MDC.getMap()).isEmpty();
    }

    @Test
    void a_field_that_does_not_apply_is_left_out_and_comes_back_after() {
        MDC.put("tenant", "acme");
        try (LogFields none = LogFields.of(LogFields.TENANT, null, LogFields.ALLOCATION_ID, "")) {
            assertThat(MDC.get("tenant")).isNull();
            assertThat(MDC.getMap()).doesNotContainKey("allocation_id");
        }
        assertThat(MDC.get("tenant")).isEqualTo("acme");
    }

    @Test
    void keys_and_values_come_in_pairs() {
        assertThatThrownBy(() -> LogFields.of(LogFields.JOB_ID))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pairs");
    }
}
