package dev.gpucloud.scheduler.service.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.gpucloud.contracts.events.EventCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals a job's secret variables ({@code secretEnv}) before its spec is stored in {@code jobs.spec_json}, and opens
 * them when the spec is read back, so that the database, its backups and its replicas hold no secret in the clear.
 * Each value is encrypted on its own with AES-256-GCM under the current key (the first of the key file), with the
 * tenant and the variable's name as associated data: a sealed value copied into another tenant's job, or under
 * another name, does not open. A sealed value reads {@code gpucloud:sealed:v1:<key id>:<base64url(nonce|ciphertext)>},
 * the key id being the first 8 hex digits of the key's SHA-256, so older keys kept in the file still open what they
 * sealed (rotation: add the new key as the first line, drop an old one once no open job needs it; dropping it makes
 * what it sealed unreadable for good). A stored value without the prefix is read as it is: rows written before a
 * key was configured. Without a key file nothing is sealed, and the service says so at start.
 */
final class SecretSeal {

    static final String PREFIX = dev.gpucloud.contracts.events.JobSpec.SEALED_PREFIX + "v1:";
    private static final String FIELD = "secretEnv";
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** One key of the key file and its id. */
    private record Key(String id, SecretKeySpec spec) {
    }

    /** Seals nothing and opens only what is not sealed: no key is configured. */
    static final SecretSeal NONE = new SecretSeal(List.of());

    private final List<Key> keys;

    private SecretSeal(List<Key> keys) {
        this.keys = List.copyOf(keys);
    }

    /**
     * The keys of {@code file}: one per line, each 32 bytes in base64 (standard or URL-safe); blank lines and
     * lines starting with {@code #} are skipped. The first seals; all open.
     *
     * @throws IllegalArgumentException naming the file and line of a key that is not 32 bytes of base64, or a
     *         file without a key
     */
    static SecretSeal fromFile(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the secrets key file " + file + ": " + e.getMessage(), e);
        }
        List<Key> keys = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            byte[] bytes;
            try {
                bytes = Base64.getDecoder().decode(line.replace('-', '+').replace('_', '/'));
            } catch (IllegalArgumentException e) {
                bytes = new byte[0];
            }
            if (bytes.length != 32) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": a key is 32 bytes in base64"
                        + " (e.g. `head -c 32 /dev/urandom | base64`), this is not one");
            }
            keys.add(new Key(idOf(bytes), new SecretKeySpec(bytes, "AES")));
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no key");
        }
        return new SecretSeal(keys);
    }

    /** Whether new values are sealed (a key is configured). */
    boolean seals() {
        return !keys.isEmpty();
    }

    /** The id of the key new values are sealed with; null without one. */
    String currentKeyId() {
        return keys.isEmpty() ? null : keys.get(0).id();
    }

    /** {@code specJson} (a JobSpec's JSON) with each secretEnv value sealed for {@code tenant}; as it was without a key. */
    String seal(String tenant, String specJson) {
        if (keys.isEmpty()) {
            return specJson;
        }
        return rewrite(specJson, (name, value) -> seal(tenant, name, value)); // JobSpec refuses a value that looks sealed
    }

    /**
     * {@code stored} (jobs.spec_json) with each sealed secretEnv value opened.
     *
     * @throws IllegalArgumentException naming the variable when a value does not open: sealed with a key the file
     *         no longer holds, for another tenant or name, or altered
     */
    String open(String tenant, String stored) {
        if (!stored.contains(PREFIX)) {
            return stored;
        }
        return rewrite(stored, (name, value) -> value.startsWith(PREFIX) ? open(tenant, name, value) : value);
    }

    private interface ValueRewrite {
        String apply(String name, String value);
    }

    private static String rewrite(String specJson, ValueRewrite rewrite) {
        try {
            JsonNode tree = EventCodec.mapper().readTree(specJson);
            JsonNode env = tree.get(FIELD);
            if (!(env instanceof ObjectNode secrets) || secrets.isEmpty()) {
                return specJson;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = secrets.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getValue().isTextual()) {
                    e.setValue(TextNode.valueOf(rewrite.apply(e.getKey(), e.getValue().textValue())));
                }
            }
            return EventCodec.mapper().writeValueAsString(tree);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a job spec's JSON: " + e.getMessage(), e);
        }
    }

    private String seal(String tenant, String name, String value) {
        Key key = keys.get(0);
        try {
            byte[] nonce = new byte[NONCE_BYTES];
            RANDOM.nextBytes(nonce);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key.spec(), new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(aad(tenant, name));
            byte[] sealed = cipher.doFinal(value.getBytes(StandardCharsets.UTF_8));
            byte[] out = new byte[nonce.length + sealed.length];
            System.arraycopy(nonce, 0, out, 0, nonce.length);
            System.arraycopy(sealed, 0, out, nonce.length, sealed.length);
            return PREFIX + key.id() + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available: " + e.getMessage(), e);
        }
    }

    private String open(String tenant, String name, String sealed) {
        String rest = sealed.substring(PREFIX.length());
        int colon = rest.indexOf(':');
        String id = colon < 0 ? "" : rest.substring(0, colon);
        Key key = keys.stream().filter(k -> k.id().equals(id)).findFirst().orElseThrow(() ->
                new IllegalArgumentException("secretEnv '" + name + "' is sealed with key " + id + ", which"
                        + " gpucloud.scheduler.secrets-key-file does not hold"
                        + (keys.isEmpty() ? " (no key file is configured)" : "")));
        try {
            byte[] in = Base64.getUrlDecoder().decode(rest.substring(colon + 1));
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key.spec(), new GCMParameterSpec(TAG_BITS, in, 0, NONCE_BYTES));
            cipher.updateAAD(aad(tenant, name));
            return new String(cipher.doFinal(in, NONCE_BYTES, in.length - NONCE_BYTES), StandardCharsets.UTF_8);
        } catch (GeneralSecurityException | IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("secretEnv '" + name + "' does not open with key " + id
                    + ": altered, or sealed for another tenant or variable");
        }
    }

    private static byte[] aad(String tenant, String name) {
        return ("gpucloud secretEnv\u0000" + tenant + "\u0000" + name).getBytes(StandardCharsets.UTF_8);
    }

    private static String idOf(byte[] key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key), 0, 4);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
