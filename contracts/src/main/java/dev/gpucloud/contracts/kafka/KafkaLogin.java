package dev.gpucloud.contracts.kafka;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * A node agent's own Kafka login on Kubernetes, as the scheduler's enrolment answers it beside the credential
 * ({@code kafka.user=}, {@code kafka.password=} lines; docs/security.md, "Enrolment on Kubernetes"). An older agent
 * reads the credential's three lines from the same answer and ignores these. {@link #toString} leaves the password
 * out, so that no log line can carry it.
 */
public record KafkaLogin(String user, String password) {

    /** The answer's line with the SCRAM user name. */
    public static final String USER_KEY = "kafka.user";
    /** The answer's line with the SCRAM password. */
    public static final String PASSWORD_KEY = "kafka.password";
    /** Letters, digits and the characters of a Kubernetes name: nothing that could end a JAAS string. */
    private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    private static final Pattern PASSWORD = Pattern.compile("[A-Za-z0-9._~+/=-]{16,200}");

    public KafkaLogin {
        if (user == null || !USER.matcher(user).matches()) {
            throw new IllegalArgumentException("a Kafka user is 1-100 letters, digits, '.', '_' or '-'");
        }
        if (password == null || !PASSWORD.matcher(password).matches()) {
            // never quoted back: it is a password
            throw new IllegalArgumentException("a Kafka password is 16-200 letters, digits or '._~+/=-'");
        }
    }

    /**
     * The login in an enrolment answer or a login file; {@code null} where it has none (a scheduler that makes no
     * KafkaUsers).
     *
     * @throws IllegalArgumentException when only one of the two lines is there, or either is malformed
     */
    public static KafkaLogin parse(String text) {
        Properties props = new Properties();
        try {
            props.load(new StringReader(text));
        } catch (IOException e) {
            throw new IllegalArgumentException("not a Kafka login: " + e.getMessage(), e);
        }
        String user = props.getProperty(USER_KEY);
        String password = props.getProperty(PASSWORD_KEY);
        if (user == null && password == null) {
            return null;
        }
        if (user == null || password == null) {
            throw new IllegalArgumentException("a Kafka login needs both " + USER_KEY + "= and " + PASSWORD_KEY + "=");
        }
        return new KafkaLogin(user.strip(), password.strip());
    }

    /** The login's file beside an agent's credential file ({@code credential} gives {@code credential.kafka}). */
    public static Path besideCredential(Path credentialFile) {
        return credentialFile.resolveSibling(credentialFile.getFileName() + ".kafka");
    }

    /** Reads a login file written by {@link #write}. */
    public static KafkaLogin read(Path file) throws IOException {
        try {
            KafkaLogin login = parse(Files.readString(file, StandardCharsets.US_ASCII));
            if (login == null) {
                throw new IllegalArgumentException("no " + USER_KEY + "= and " + PASSWORD_KEY + "=");
            }
            return login;
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** The two lines, as the scheduler answers them and the login file holds them. */
    public String fileText() {
        return USER_KEY + "=" + user + "\n" + PASSWORD_KEY + "=" + password + "\n";
    }

    /** Writes the login to {@code file}, readable by its owner only from the start. */
    public void write(Path file) throws IOException {
        KafkaAccess.writeOwnerOnly(file, fileText(), true);
    }

    @Override
    public String toString() {
        return "KafkaLogin[user=" + user + ", password=(hidden)]";
    }
}
