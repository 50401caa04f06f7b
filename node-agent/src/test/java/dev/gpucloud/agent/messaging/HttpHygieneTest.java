package dev.gpucloud.agent.messaging;

import dev.gpucloud.testsupport.HttpHygieneChecks;
import dev.gpucloud.testsupport.KafkaTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** This service's listener against slow and hostile clients ({@link HttpHygieneChecks}). */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
class HttpHygieneTest extends HttpHygieneChecks {
}
