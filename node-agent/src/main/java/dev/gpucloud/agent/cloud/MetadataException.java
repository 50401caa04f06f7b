package dev.gpucloud.agent.cloud;

/** The metadata service could not be read, or answered something it should not have; the message says which. */
public class MetadataException extends Exception {
    public MetadataException(String message) {
        super(message);
    }
}
