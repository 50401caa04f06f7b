package dev.gpucloud.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where the CLI keeps its tokens, as kubectl keeps its config: one file per profile under
 * {@code $GPUCLOUD_HOME/profiles} (default {@code ~/.gpucloud}; the system property {@code gpucloud.home} first),
 * readable by its owner only. {@code GPUCLOUD_TOKEN}
 * overrides the file, for scripts.
 */
final class Credentials {

    private static final Pattern PROFILE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}");

    private Credentials() {
    }

    static Path home() {
        String home = System.getProperty("gpucloud.home", System.getenv("GPUCLOUD_HOME"));
        return home != null && !home.isBlank() ? Path.of(home) : Path.of(System.getProperty("user.home"), ".gpucloud");
    }

    static Path file(String profile) {
        if (!PROFILE.matcher(profile).matches()) {
            throw new IllegalArgumentException("--profile must be 1..63 letters, digits, dots, dashes or underscores,"
                    + " was '" + profile + "'");
        }
        return home().resolve("profiles").resolve(profile + ".token");
    }

    /** The token to send: GPUCLOUD_TOKEN, else the profile's file; empty when there is neither. */
    static Optional<String> token(String profile) {
        String env = System.getenv("GPUCLOUD_TOKEN");
        if (env != null && !env.isBlank()) {
            return Optional.of(env.strip());
        }
        Path file = file(profile);
        try {
            return Files.exists(file) ? Optional.of(Files.readString(file).strip()).filter(t -> !t.isEmpty())
                    : Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    static Path save(String profile, String token) {
        Path file = file(profile);
        try {
            Files.createDirectories(file.getParent());
            Path partial = file.resolveSibling(file.getFileName() + ".new");
            Files.deleteIfExists(partial);
            Files.createFile(partial, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(partial, token + "\n", StandardOpenOption.WRITE);
            Files.move(partial, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** The claims of a JWT, decoded but not verified: for showing the user who they are, never for trusting. */
    static String unverifiedClaims(String token) {
        String[] parts = token.split("\\.");
        if (parts.length < 2) {
            throw new IllegalArgumentException("the stored token is not a JWT");
        }
        try {
            return new String(Base64.getUrlDecoder().decode(parts[1]), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the stored token is not a JWT", e);
        }
    }
}
