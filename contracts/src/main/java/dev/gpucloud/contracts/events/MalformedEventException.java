package dev.gpucloud.contracts.events;

/** A record that cannot become an event; the message says which topic and which field. */
public class MalformedEventException extends RuntimeException {
    public MalformedEventException(String message) {
        super(message);
    }

    public MalformedEventException(String message, Throwable cause) {
        super(message, cause);
    }
}
