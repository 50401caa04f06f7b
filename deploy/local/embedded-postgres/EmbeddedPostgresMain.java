import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;

/**
 * Runs an embedded PostgreSQL on the given port with its data under the given folder until killed.
 * Launched by deploy/local/postgres.sh as a single-file Java program: java -cp 'lib/*' EmbeddedPostgresMain.java
 */
public class EmbeddedPostgresMain {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Path dataDir = Path.of(args[1]);
        Files.createDirectories(dataDir);
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setPort(port)
                .setDataDirectory(dataDir)
                .setCleanDataDirectory(false)
                .start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                pg.close();
            } catch (Exception e) {
                System.err.println("embedded postgres: close failed: " + e);
            }
        }));
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/postgres", "postgres", "")) {
            c.createStatement().execute("select 1");
        }
        System.out.println("embedded postgres ready on port " + port);
        Thread.currentThread().join();
    }
}
