package dev.gpucloud.scheduler.service.engine;

/** No host with this id is known to the scheduler (and, for an undrain, none has a cordon). */
public class HostNotFoundException extends RuntimeException {
    public HostNotFoundException(String nodeId) {
        super("host '" + nodeId + "' is not known to the scheduler (ListNodes shows the hosts it knows)");
    }
}
