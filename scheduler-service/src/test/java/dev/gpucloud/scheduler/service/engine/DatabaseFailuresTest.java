package dev.gpucloud.scheduler.service.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Not a @QuarkusTest: failures are classified and worded by plain methods. */
class DatabaseFailuresTest {

    @Test
    void aReasonNeverCarriesTheSqlStatement() {
        RuntimeException e = new RuntimeException("error executing SQL statement [ERROR: invalid byte sequence"
                + " (22021)] [insert into jobs (id,spec_json) values ($1,$2)]");
        assertThat(DatabaseFailures.clip(e))
                .isEqualTo("RuntimeException: error executing SQL statement [ERROR: invalid byte sequence (22021)]");
    }

    @Test
    void aReasonIsOneLineOfPrintableTextAndClipped() {
        assertThat(DatabaseFailures.clip(new IllegalStateException("first\nsecond"))).isEqualTo(
                "IllegalStateException: first");
        assertThat(DatabaseFailures.printable("a\u0000b")).isEqualTo("a?b");
        assertThat(DatabaseFailures.printable("x".repeat(1000))).hasSize(DatabaseFailures.REASON_LIMIT + 3);
    }

    @Test
    void theDatabaseGoingAwayIsTransientABadValueIsNot() {
        assertThat(DatabaseFailures.isTransient(new RuntimeException(new java.net.ConnectException("refused")))).isTrue();
        assertThat(DatabaseFailures.isTransient(new RuntimeException("Pool closed"))).isTrue();
        assertThat(DatabaseFailures.isTransient(new IllegalArgumentException("spec_json is not JSON"))).isFalse();
        assertThat(DatabaseFailures.isTransient(new dev.gpucloud.contracts.events.MalformedEventException("not JSON",
                new com.fasterxml.jackson.core.io.JsonEOFException(null, null, "end of input")))).as("Jackson's are IOExceptions")
                .isFalse();
    }

    /**
     * What a restart of PostgreSQL looked like to a scheduling pass: the driver's 57P01 wrapped by Hibernate, the
     * connection closed under a statement, and a transaction whose rollback failed too (a composite). Each is
     * the database's trouble, so the pass is tried again, not its jobs failed.
     */
    @Test
    void aServerRestartIsTransientHoweverItIsWrapped() {
        var shutdown = new io.vertx.pgclient.PgException("terminating connection due to administrator command", "FATAL",
                "57P01", null);
        assertThat(DatabaseFailures.isTransient(new org.hibernate.HibernateException(shutdown))).isTrue();
        assertThat(DatabaseFailures.isTransient(io.vertx.sqlclient.ClosedConnectionException.INSTANCE)).isTrue();
        assertThat(DatabaseFailures.isTransient(new io.smallrye.mutiny.CompositeException(
                new IllegalStateException("Transaction already completed"),
                new RuntimeException(io.vertx.sqlclient.ClosedConnectionException.INSTANCE)))).isTrue();
        var badValue = new io.vertx.pgclient.PgException("invalid byte sequence", "ERROR", "22021", null);
        assertThat(DatabaseFailures.isTransient(new org.hibernate.HibernateException(badValue))).isFalse();
        assertThat(DatabaseFailures.isTransient(new io.smallrye.mutiny.CompositeException(
                new org.hibernate.HibernateException(badValue), new IllegalStateException("rolled back")))).isFalse();
    }
}
