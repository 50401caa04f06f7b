import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Base64;
import java.util.Properties;

/**
 * Runs an embedded PostgreSQL on the given port with its data under the given folder until killed.
 * Launched by deploy/local/postgres.sh as a single-file Java program: java -cp 'lib/*' EmbeddedPostgresMain.java
 * PORT DATA_DIR [TLS_DIR AUTH_DIR].
 *
 * <p>With TLS_DIR and AUTH_DIR (PG_SECURITY=tls, what ./gpucloud up asks for) every TCP connection must use TLS
 * (1.3, with the certificate TLS_DIR/postgres.p12 that deploy/local/tls.sh signed with the stack's CA) and log in
 * with a SCRAM-SHA-256 password, the superuser's too (AUTH_DIR/postgres.password); a plaintext connection finds
 * no pg_hba.conf line and is refused. Without them the server trusts every local connection, as tests and CI use it.
 */
public class EmbeddedPostgresMain {

    /** Marks a data folder whose superuser has a password (made by a secured start). */
    static final String SECURED_MARKER = "gpucloud-secured";

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Path dataDir = Path.of(args[1]).toAbsolutePath();
        boolean secured = args.length >= 4;
        Path tlsDir = secured ? Path.of(args[2]).toAbsolutePath() : null;
        Path authDir = secured ? Path.of(args[3]).toAbsolutePath() : null;
        boolean fresh = !Files.exists(dataDir.resolve("postgresql.conf"));
        if (secured && !fresh && !Files.exists(dataDir.resolve(SECURED_MARKER))) {
            System.err.println("error: the embedded PostgreSQL data in " + dataDir + " was made without passwords"
                    + " (by a plaintext start, as tests and CI run it), so its superuser could not log in over TLS:"
                    + " start it plaintext (PG_SECURITY=plain) or move that folder away");
            System.exit(2);
        }
        Files.createDirectories(dataDir);
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                .setPort(port)
                .setDataDirectory(dataDir)
                .setCleanDataDirectory(false);
        Path superPassword = null;
        if (secured) {
            superPassword = authDir.resolve("postgres.password");
            Path[] pem = exportPem(tlsDir, "postgres");
            // zonky hands its "locale" settings to initdb as --NAME=VALUE: the superuser has a password from the start
            builder.setLocaleConfig("pwfile", superPassword.toString())
                    .setServerConfig("ssl", "on")
                    .setServerConfig("ssl_cert_file", pem[0].toString())
                    .setServerConfig("ssl_key_file", pem[1].toString())
                    .setServerConfig("ssl_min_protocol_version", "TLSv1.3")
                    .setServerConfig("password_encryption", "scram-sha-256")
                    .setServerConfig("listen_addresses", "localhost")
                    // how zonky itself checks that the server is up
                    .setConnectConfig("password", Files.readString(superPassword).strip())
                    .setConnectConfig("sslmode", "verify-full")
                    .setConnectConfig("sslrootcert", tlsDir.resolve("ca.pem").toString());
        }
        String hba = secured ? """
                # Written by deploy/local/embedded-postgres/EmbeddedPostgresMain.java at every start.
                # TCP only over TLS, with a SCRAM-SHA-256 password; no hostnossl line, so plaintext is refused.
                local   all  all                 scram-sha-256
                hostssl all  all  127.0.0.1/32   scram-sha-256
                hostssl all  all  ::1/128        scram-sha-256
                """ : """
                # Written by deploy/local/embedded-postgres/EmbeddedPostgresMain.java at every start.
                # Plaintext and trust, for tests and CI on one machine (PG_SECURITY=plain).
                local   all  all                 trust
                host    all  all  127.0.0.1/32   trust
                host    all  all  ::1/128        trust
                """;
        builder.setDataDirectoryCustomizer(dir -> {
            try {
                Files.writeString(dir.toPath().resolve("pg_hba.conf"), hba);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        EmbeddedPostgres pg = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                pg.close();
            } catch (Exception e) {
                System.err.println("embedded postgres: close failed: " + e);
            }
        }));
        Properties login = new Properties();
        login.setProperty("user", "postgres");
        if (secured) {
            login.setProperty("password", Files.readString(superPassword).strip());
            login.setProperty("sslmode", "verify-full");
            login.setProperty("sslrootcert", tlsDir.resolve("ca.pem").toString());
        }
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/postgres", login)) {
            c.createStatement().execute("select 1");
        }
        if (secured) {
            Files.writeString(dataDir.resolve(SECURED_MARKER), "superuser password in " + superPassword + "\n");
        }
        System.out.println("embedded postgres ready on port " + port + (secured ? " (TLS and SCRAM only)" : ""));
        Thread.currentThread().join();
    }

    /**
     * The server's certificate chain and key from TLS_DIR/NAME.p12 as the PEM files PostgreSQL reads
     * (NAME.crt.pem, NAME.key.pem; mode 600, as PostgreSQL demands of a key).
     */
    static Path[] exportPem(Path tlsDir, String name) throws Exception {
        Path p12 = tlsDir.resolve(name + ".p12");
        char[] pass = Files.readString(tlsDir.resolve(name + ".pass")).strip().toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(p12)) {
            ks.load(in, pass);
        }
        Key key = ks.getKey(name, pass);
        Certificate[] chain = ks.getCertificateChain(name);
        if (key == null || chain == null) {
            throw new IllegalStateException(p12 + " holds no key and certificate named '" + name + "'");
        }
        StringBuilder certs = new StringBuilder();
        for (Certificate c : chain) {
            certs.append(pem("CERTIFICATE", c.getEncoded()));
        }
        Path crt = tlsDir.resolve(name + ".crt.pem");
        Path keyFile = tlsDir.resolve(name + ".key.pem");
        writePrivate(crt, certs.toString());
        writePrivate(keyFile, pem("PRIVATE KEY", key.getEncoded()));
        return new Path[] {crt, keyFile};
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    static void writePrivate(Path file, String text) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, text);
    }
}
