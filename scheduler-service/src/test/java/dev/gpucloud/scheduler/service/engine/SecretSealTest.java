package dev.gpucloud.scheduler.service.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Secret variables sealed in a stored spec: only the right key, tenant and name open them. */
class SecretSealTest {

    private static final String SPEC = "{\"name\":\"train\",\"env\":{\"MODE\":\"fast\"},"
            + "\"secretEnv\":{\"WANDB_API_KEY\":\"hunter2\",\"HF_TOKEN\":\"hf_s3cr3t\"}}";

    @TempDir
    Path dir;

    private Path keys(String... lines) throws IOException {
        Path file = dir.resolve("secrets-" + System.nanoTime() + ".key");
        Files.writeString(file, String.join("\n", lines) + "\n");
        return file;
    }

    private static String key(long seed) {
        byte[] bytes = new byte[32];
        new Random(seed).nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    @Test
    void aSealedSpecHoldsNoSecretAndOpensToTheSameSpec() throws IOException {
        SecretSeal seal = SecretSeal.fromFile(keys("# the current key first", key(1)));

        String stored = seal.seal("acme", SPEC);

        assertThat(stored).doesNotContain("hunter2", "hf_s3cr3t").contains("\"MODE\":\"fast\"")
                .contains(SecretSeal.PREFIX + seal.currentKeyId() + ":");
        assertThat(seal.open("acme", stored)).isEqualTo(SPEC);
        assertThat(seal.seal("acme", SPEC)).as("a fresh nonce each time").isNotEqualTo(stored);
        assertThat(seal.open("acme", seal.seal("acme", stored))).as("every value is sealed, whatever it reads")
                .isEqualTo(stored);
    }

    @Test
    void aValueDoesNotOpenForAnotherTenantOrUnderAnotherNameOrAltered() throws IOException {
        SecretSeal seal = SecretSeal.fromFile(keys(key(1)));
        String stored = seal.seal("acme", SPEC);

        assertThatThrownBy(() -> seal.open("globex", stored)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("secretEnv 'WANDB_API_KEY' does not open").hasMessageNotContaining("hunter2");
        String swapped = stored.replace("\"WANDB_API_KEY\"", "\"OTHER\"");
        assertThatThrownBy(() -> seal.open("acme", swapped)).hasMessageContaining("secretEnv 'OTHER' does not open");
        int at = stored.indexOf(SecretSeal.PREFIX) + SecretSeal.PREFIX.length() + 12;
        String altered = stored.substring(0, at) + (stored.charAt(at) == 'A' ? 'B' : 'A') + stored.substring(at + 1);
        assertThatThrownBy(() -> seal.open("acme", altered)).hasMessageContaining("does not open");
    }

    @Test
    void anOlderKeyKeptInTheFileStillOpensAndADroppedOneIsNamed() throws IOException {
        SecretSeal old = SecretSeal.fromFile(keys(key(1)));
        String stored = old.seal("acme", SPEC);

        SecretSeal rotated = SecretSeal.fromFile(keys(key(2), key(1)));
        SecretSeal dropped = SecretSeal.fromFile(keys(key(2)));

        assertThat(rotated.currentKeyId()).isNotEqualTo(old.currentKeyId());
        assertThat(rotated.open("acme", stored)).isEqualTo(SPEC);
        assertThat(rotated.seal("acme", SPEC)).contains(SecretSeal.PREFIX + rotated.currentKeyId() + ":");
        assertThatThrownBy(() -> dropped.open("acme", stored)).hasMessageContaining(
                "sealed with key " + old.currentKeyId() + ", which gpucloud.scheduler.secrets-key-file does not hold");
        assertThatThrownBy(() -> SecretSeal.NONE.open("acme", stored)).hasMessageContaining("no key file");
    }

    @Test
    void withoutAKeyNothingIsSealedAndPlainRowsAreReadAsTheyAre() throws IOException {
        assertThat(SecretSeal.NONE.seals()).isFalse();
        assertThat(SecretSeal.NONE.seal("acme", SPEC)).isEqualTo(SPEC);
        assertThat(SecretSeal.fromFile(keys(key(1))).open("acme", SPEC)).as("a row from before the key").isEqualTo(SPEC);
        assertThat(SecretSeal.fromFile(keys(key(1))).seal("acme", "{\"name\":\"x\",\"secretEnv\":{}}"))
                .isEqualTo("{\"name\":\"x\",\"secretEnv\":{}}");
    }

    @Test
    void aKeyFileWithABadLineOrNoKeyIsRefusedNamingTheLine() throws IOException {
        Path shortKey = keys("# comment", "", Base64.getEncoder().encodeToString(new byte[16]));
        assertThatThrownBy(() -> SecretSeal.fromFile(shortKey)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("line 3: a key is 32 bytes in base64");
        assertThatThrownBy(() -> SecretSeal.fromFile(keys("not base64 at all!"))).hasMessageContaining("line 1");
        assertThatThrownBy(() -> SecretSeal.fromFile(keys("# only a comment"))).hasMessageContaining("holds no key");
        assertThatThrownBy(() -> SecretSeal.fromFile(dir.resolve("missing.key"))).hasMessageContaining("missing.key");
    }
}
