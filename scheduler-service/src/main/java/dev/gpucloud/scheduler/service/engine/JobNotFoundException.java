package dev.gpucloud.scheduler.service.engine;

/** No job has this id. */
public class JobNotFoundException extends RuntimeException {
    public JobNotFoundException(String jobId) {
        super("job '" + jobId + "' not found");
    }
}
