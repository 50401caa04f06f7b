package dev.gpucloud.agent.config;

import dev.gpucloud.agent.cloud.AwsImds;
import dev.gpucloud.agent.cloud.AzureScheduledEvents;
import dev.gpucloud.agent.cloud.GcpMetadata;
import dev.gpucloud.agent.cloud.MetadataProvider;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.Optional;

/** The cloud metadata service named by gpucloud.agent.cloud.provider, if any. */
public class CloudProducer {

    @Produces
    @Singleton
    Optional<MetadataProvider> metadataProvider(AgentConfig config) {
        return provider(config.cloud());
    }

    static Optional<MetadataProvider> provider(AgentConfig.Cloud cloud) {
        return switch (cloud.provider()) {
            case NONE -> Optional.empty();
            case AWS -> Optional.of(new AwsImds(cloud.endpoint().orElse("http://169.254.169.254"), cloud.timeout()));
            case GCP -> Optional.of(new GcpMetadata(cloud.endpoint().orElse("http://metadata.google.internal"),
                    cloud.timeout()));
            case AZURE -> Optional.of(new AzureScheduledEvents(cloud.endpoint().orElse("http://169.254.169.254"),
                    cloud.timeout()));
        };
    }
}
