package dev.gpucloud.scheduler.service.config;

import dev.gpucloud.contracts.kafka.Enrolment;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The stack's enrolment key, where one is configured ({@code gpucloud.enrolment.key}, from
 * {@value Enrolment#KEY_ENV}; docs/security.md, "Enrolment"): it checks that every agent's record comes from an
 * agent enrolled for its host, and seals a START's secret values for that agent. Read from the service's own
 * configuration rather than {@link Enrolment#configuredVerifier()}, which holds one answer per JVM, so that a test
 * profile can give the scheduler a key. The service does not start with a key it cannot read.
 */
@ApplicationScoped
public class EnrolmentKey {

    private final Enrolment.Verifier verifier;
    /** The key itself, for minting agents' credentials (POST /enrolment); null without one. */
    private final byte[] key;

    public EnrolmentKey(@ConfigProperty(name = "gpucloud.enrolment.key") Optional<String> file) {
        String named = file.filter(f -> !f.isBlank() && !f.equals("none")).orElse(null);
        if (named == null) {
            this.key = null;
            this.verifier = null;
            return;
        }
        try {
            this.key = Enrolment.readKey(Path.of(named));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the enrolment key " + named + " (" + Enrolment.KEY_ENV + "): "
                    + e.getMessage(), e);
        }
        this.verifier = new Enrolment.Verifier(key);
    }

    /** The key, read once at start; {@code null} without one. */
    public byte[] key() {
        return key == null ? null : key.clone();
    }

    /** The verifier of the key; {@code null} without one (agents' records are taken unsigned, secrets go clear). */
    public Enrolment.Verifier verifier() {
        return verifier;
    }
}
