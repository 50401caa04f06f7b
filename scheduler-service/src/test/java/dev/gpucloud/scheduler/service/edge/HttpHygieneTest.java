package dev.gpucloud.scheduler.service.edge;

import dev.gpucloud.testsupport.HttpHygieneChecks;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** This service's listener against slow and hostile clients ({@link HttpHygieneChecks}). */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class HttpHygieneTest extends HttpHygieneChecks {

    /** A WatchJob stream is quiet while its job is: this port's idle timeout is minutes (docs/operations.md). */
    @Override
    protected boolean cutsHeaderDrips() {
        return false;
    }
}
