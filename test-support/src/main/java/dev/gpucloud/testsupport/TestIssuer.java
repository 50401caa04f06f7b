package dev.gpucloud.testsupport;

import com.sun.net.httpserver.HttpServer;
import dev.gpucloud.identity.DevIssuer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A real OIDC issuer for tests (the development issuer, {@link DevIssuer}, on a free loopback port) and the
 * settings that switch a service's authentication on against it: the service finds its keys through
 * discovery, as it would a production provider's. Tests mint tokens with {@link #token} and {@link #issuer}.
 */
public class TestIssuer implements QuarkusTestResourceLifecycleManager {

    private static DevIssuer issuer;
    private static HttpServer server;

    /** Starts the issuer once per JVM; later calls return the same one. */
    public static synchronized DevIssuer issuer() {
        if (issuer == null) {
            try {
                server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
                issuer = DevIssuer.inMemory("http://127.0.0.1:" + server.getAddress().getPort());
                issuer.serveOn(server);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the test issuer", e);
            }
        }
        return issuer;
    }

    /** A token valid for an hour. */
    public static String token(String subject, List<String> tenants, List<String> roles) {
        return issuer().mint(subject, tenants, roles, Duration.ofHours(1));
    }

    @Override
    public Map<String, String> start() {
        return Map.of(
                "gpucloud.auth.enabled", "true",
                "quarkus.oidc.tenant-enabled", "true",
                "quarkus.oidc.auth-server-url", issuer().issuer(),
                // the node agent verifies tokens itself (AgentAccess), from the same issuer
                "gpucloud.auth.issuer", issuer().issuer());
    }

    @Override
    public void stop() {
        // kept for the JVM: other test classes may mint against the same keys
    }
}
