package dev.gpucloud.autoscaler.provider.aws;

import java.time.Duration;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * How the autoscaler's EC2 client retries: the SDK's standard strategy (throttling such as
 * {@code RequestLimitExceeded}, 5xx and I/O errors), with few attempts, because the reconciler comes back on its next
 * round anyway and a launch that hangs in backoff holds up every other pool.
 */
public final class Ec2Clients {

    /** Attempts per call, the first included. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;

    private Ec2Clients() {}

    /** The standard retry strategy with {@code maxAttempts} and exponential backoff from {@code baseDelay}. */
    public static RetryStrategy retryStrategy(int maxAttempts, Duration baseDelay, Duration maxDelay) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        BackoffStrategy backoff = BackoffStrategy.exponentialDelay(baseDelay, maxDelay);
        return AwsRetryStrategy.standardRetryStrategy().toBuilder()
                .maxAttempts(maxAttempts)
                .backoffStrategy(backoff)
                .throttlingBackoffStrategy(backoff)
                .build();
    }

    /** The client overrides that carry {@link #retryStrategy}. */
    public static ClientOverrideConfiguration overrides(int maxAttempts, Duration baseDelay, Duration maxDelay) {
        return ClientOverrideConfiguration.builder()
                .retryStrategy(retryStrategy(maxAttempts, baseDelay, maxDelay))
                .build();
    }

    /**
     * A client for a region, with the default credentials chain (the instance profile or IRSA role where the
     * autoscaler runs), the URL-connection HTTP client and {@link #DEFAULT_MAX_ATTEMPTS} attempts.
     */
    public static Ec2Client forRegion(Region region) {
        return Ec2Client.builder()
                .region(region)
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(overrides(DEFAULT_MAX_ATTEMPTS, Duration.ofMillis(200), Duration.ofSeconds(5)))
                .build();
    }
}
