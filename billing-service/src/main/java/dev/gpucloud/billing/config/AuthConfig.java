package dev.gpucloud.billing.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Who may call (docs/security.md), under {@code gpucloud.auth}; the provider itself is {@code quarkus.oidc.*}. */
@ConfigMapping(prefix = "gpucloud.auth")
public interface AuthConfig {

    /** Off only for the service's own unit tests: every request is then let through, and a warning says so. */
    @WithDefault("true")
    boolean enabled();

    /** The claim that names the caller's tenants: a tenant id or a list of them. */
    @WithDefault("gpucloud_tenants")
    String tenantsClaim();
}
