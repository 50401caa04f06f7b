package dev.gpucloud.scheduler.service.messaging;

import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.scheduler.service.engine.AdmissionException;
import io.vertx.pgclient.PgException;

/**
 * What a dead letter's reason may say: a refusal names the topic and the field (its message already does);
 * any other failure is reduced to the topic, what failed and, for the database, its SQLSTATE and message
 * (never the SQL statement, a stack or an internal class name, which the persistence layer's messages carry).
 */
final class DeadLetterReasons {

    private static final int MAX = 300;

    private DeadLetterReasons() {
    }

    /** The failure to dead-letter a record of {@code topic} with. */
    static Throwable forDeadLetter(String topic, Throwable failure) {
        if (failure instanceof MalformedEventException) {
            return failure;
        }
        if (failure instanceof IllegalArgumentException || failure instanceof AdmissionException) {
            return new MalformedEventException(clip(topic + ": " + failure.getMessage()), failure);
        }
        for (Throwable c = failure; c != null; c = c.getCause()) {
            if (c instanceof PgException pg) {
                return new MalformedEventException(clip(topic + ": the database refused the record: "
                        + pg.getErrorMessage() + " (SQLSTATE " + pg.getSqlState() + ")"), failure);
            }
        }
        return new MalformedEventException(topic + ": the record could not be applied ("
                + failure.getClass().getSimpleName() + "; see the scheduler's log)", failure);
    }

    private static String clip(String text) {
        String line = text.replaceAll("[\\p{Cntrl}]", " ");
        return line.length() <= MAX ? line : line.substring(0, MAX) + "...";
    }
}
