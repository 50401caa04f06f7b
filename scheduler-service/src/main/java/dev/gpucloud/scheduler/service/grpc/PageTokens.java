package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * ListJobs cursors that only this service can issue: the (submittedAt, jobId) of the last job of a page,
 * followed by an HMAC-SHA256 of it under a key derived from {@code gpucloud.scheduler.page-token-secret}.
 * Without a secret, a random key per process is used: tokens then stop working across a restart or a
 * failover (the caller starts from the first page again). A token that fails its MAC is refused.
 */
public final class PageTokens {

    static final String NOT_OURS = "field 'page_token' is not a token this service issued";
    private static final int MAC_BYTES = 16;

    private final SecretKeySpec key;

    public PageTokens(Optional<String> secret) {
        byte[] material;
        if (secret.isPresent() && !secret.get().isBlank()) {
            material = sha256(("gpucloud page tokens v1:" + secret.get()).getBytes(StandardCharsets.UTF_8));
        } else {
            material = new byte[32];
            new SecureRandom().nextBytes(material);
        }
        key = new SecretKeySpec(material, "HmacSHA256");
    }

    /** A cursor after this job. */
    public String issue(Instant submittedAt, String jobId) {
        byte[] id = jobId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(12 + id.length);
        body.putLong(submittedAt.getEpochSecond()).putInt(submittedAt.getNano()).put(id);
        byte[] raw = body.array();
        byte[] token = new byte[raw.length + MAC_BYTES];
        System.arraycopy(raw, 0, token, 0, raw.length);
        System.arraycopy(mac(raw), 0, token, raw.length, MAC_BYTES);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    }

    /** The cursor a token names; null for an empty token; INVALID_ARGUMENT for any token we did not issue. */
    public Cursor parse(String token) {
        if (token == null || token.isEmpty()) {
            return null;
        }
        try {
            Check.optionalText(token, Limits.PAGE_TOKEN, "page_token");
            byte[] bytes = Base64.getUrlDecoder().decode(token);
            if (bytes.length < 12 + 1 + MAC_BYTES) {
                throw GrpcErrors.invalid(NOT_OURS);
            }
            byte[] raw = java.util.Arrays.copyOf(bytes, bytes.length - MAC_BYTES);
            byte[] mac = java.util.Arrays.copyOfRange(bytes, bytes.length - MAC_BYTES, bytes.length);
            if (!MessageDigest.isEqual(mac, mac(raw))) {
                throw GrpcErrors.invalid(NOT_OURS);
            }
            ByteBuffer body = ByteBuffer.wrap(raw);
            Instant at = Instant.ofEpochSecond(body.getLong(), body.getInt());
            String jobId = new String(raw, 12, raw.length - 12, StandardCharsets.UTF_8);
            return new Cursor(at, jobId);
        } catch (RuntimeException e) {
            throw GrpcErrors.invalid(NOT_OURS);
        }
    }

    /** Where the next page starts. */
    public record Cursor(Instant submittedAt, String jobId) {
    }

    private byte[] mac(byte[] raw) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return java.util.Arrays.copyOf(mac.doFinal(raw), MAC_BYTES);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    private static byte[] sha256(byte[] input) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(input);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
