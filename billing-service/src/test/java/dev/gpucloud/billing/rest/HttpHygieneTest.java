package dev.gpucloud.billing.rest;

import dev.gpucloud.testsupport.HttpHygieneChecks;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** This service's listener against slow and hostile clients ({@link HttpHygieneChecks}). */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class HttpHygieneTest extends HttpHygieneChecks {
}
