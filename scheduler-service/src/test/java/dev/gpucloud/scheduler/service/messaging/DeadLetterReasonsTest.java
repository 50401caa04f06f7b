package dev.gpucloud.scheduler.service.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.pgclient.PgException;
import org.junit.jupiter.api.Test;

/** Not a @QuarkusTest: what a dead letter may say is a rule on messages. */
class DeadLetterReasonsTest {

    @Test
    void a_database_failure_keeps_its_sqlstate_and_loses_the_statement() {
        PgException pg = new PgException("invalid byte sequence for encoding \"UTF8\": 0x00", "ERROR", "22021", null);
        RuntimeException wrapped = new RuntimeException("HR000057: Failed to execute statement [insert into jobs "
                + "(tenant, spec_json) values ($1, $2)]; could not execute statement", pg);

        String reason = DeadLetterReasons.forDeadLetter("job.requests", wrapped).getMessage();

        assertThat(reason).isEqualTo("job.requests: the database refused the record: invalid byte sequence for "
                + "encoding \"UTF8\": 0x00 (SQLSTATE 22021)");
    }

    @Test
    void a_refusal_names_the_topic_and_an_unknown_failure_says_only_its_kind() {
        assertThat(DeadLetterReasons.forDeadLetter("job.requests",
                new IllegalArgumentException("field 'spec.workers' must be within 1..1024, was 0")).getMessage())
                .isEqualTo("job.requests: field 'spec.workers' must be within 1..1024, was 0");
        assertThat(DeadLetterReasons.forDeadLetter("job.requests",
                new ArithmeticException("long overflow")).getMessage())
                .isEqualTo("job.requests: the record could not be applied (ArithmeticException; see the scheduler's log)");
    }
}
