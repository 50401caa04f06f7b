package dev.gpucloud.contracts.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The scrape token's header: the Bearer scheme in any case, the token exactly. */
class HttpHygieneTokenTest {

    private static final byte[] TOKEN = "s3cr3t-token".getBytes(StandardCharsets.US_ASCII);

    @Test
    void onlyTheTokenUnderTheBearerSchemePasses() {
        assertThat(HttpHygiene.carries("Bearer s3cr3t-token", TOKEN)).isTrue();
        assertThat(HttpHygiene.carries("bearer s3cr3t-token ", TOKEN)).isTrue();
        assertThat(HttpHygiene.carries("Bearer s3cr3t-tokem", TOKEN)).isFalse();
        assertThat(HttpHygiene.carries("Bearer s3cr3t-token-and-more", TOKEN)).isFalse();
        assertThat(HttpHygiene.carries("Basic s3cr3t-token", TOKEN)).isFalse();
        assertThat(HttpHygiene.carries("Bearer", TOKEN)).isFalse();
        assertThat(HttpHygiene.carries(null, TOKEN)).isFalse();
    }
}
