package dev.gpucloud.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * overrides the file, for scripts. The token file holds the bare access token (scripts read it as it is); a login
 * through the device flow keeps what refreshing it takes next to it, in {@code NAME.refresh.json}, as private.
 */
final class Credentials {

    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
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

    /** Whether the token comes from GPUCLOUD_TOKEN rather than the profile's file. */
    static boolean fromEnvironment() {
        String env = System.getenv("GPUCLOUD_TOKEN");
        return env != null && !env.isBlank();
    }

    /** Stores a token that cannot be refreshed (--dev, --token): a refresh token stored before goes. */
    static Path save(String profile, String token) {
        return save(profile, token, null);
    }

    /** Stores the access token and, where there is one, what refreshing it takes; both owner-only. */
    static Path save(String profile, String token, Refresh refresh) {
        Path file = file(profile);
        Path refreshFile = refreshFile(profile);
        try {
            writePrivate(file, token + "\n");
            if (refresh == null) {
                Files.deleteIfExists(refreshFile);
            } else {
                writePrivate(refreshFile, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(refresh) + "\n");
            }
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + " or " + refreshFile, e);
        }
    }

    /**
     * What refreshing a profile's token takes: the provider (its issuer URL and token endpoint), the client the
     * login ran as, and the refresh token.
     */
    record Refresh(@JsonProperty("issuer") String issuer, @JsonProperty("client_id") String clientId,
            @JsonProperty("token_endpoint") String tokenEndpoint, @JsonProperty("refresh_token") String refreshToken) {

        Refresh withRefreshToken(String token) {
            return new Refresh(issuer, clientId, tokenEndpoint, token);
        }
    }

    /** Deletes the profile's token and refresh token; returns the files that were there. */
    static java.util.List<Path> forget(String profile) {
        java.util.List<Path> gone = new java.util.ArrayList<>();
        for (Path file : java.util.List.of(file(profile), refreshFile(profile))) {
            try {
                if (Files.deleteIfExists(file)) {
                    gone.add(file);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete " + file, e);
            }
        }
        return gone;
    }

    static Path refreshFile(String profile) {
        return file(profile).resolveSibling(profile + ".refresh.json");
    }

    /** The profile's refresh token and where to use it; empty without one, or when the file is not readable as one. */
    static Optional<Refresh> refresh(String profile) {
        Path file = refreshFile(profile);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        try {
            Refresh refresh = JSON.readValue(file.toFile(), Refresh.class);
            return refresh.refreshToken() == null || refresh.tokenEndpoint() == null || refresh.clientId() == null
                    ? Optional.empty() : Optional.of(refresh);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The seconds since the epoch when the JWT expires, read without verifying it; empty where it names none. */
    static Optional<Long> expiry(String token) {
        try {
            JsonNode exp = JSON.readTree(unverifiedClaims(token)).get("exp");
            return exp != null && exp.canConvertToLong() ? Optional.of(exp.asLong()) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Writes {@code file} owner-only: a private file beside it, then an atomic move over it. */
    static void writePrivate(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Path partial = file.resolveSibling(file.getFileName() + ".new");
        Files.deleteIfExists(partial);
        Files.createFile(partial, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(partial, content, StandardOpenOption.WRITE);
        Files.move(partial, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
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
