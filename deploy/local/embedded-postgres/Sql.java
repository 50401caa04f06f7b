import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Properties;

/**
 * Runs the SQL on standard input (so that a password in it never shows on a command line) as the embedded
 * server's superuser, and prints the first column of each row: java Sql.java PORT [DATABASE [CA_PEM PASSWORD_FILE]].
 * With CA_PEM and PASSWORD_FILE it logs in over TLS, verifying the server against that CA, as a secured
 * server (PG_SECURITY=tls) requires; without them, plaintext and no password.
 */
public class Sql {
    public static void main(String[] args) throws Exception {
        String database = args.length > 1 ? args[1] : "postgres";
        Properties login = new Properties();
        login.setProperty("user", "postgres");
        if (args.length > 3) {
            login.setProperty("sslmode", "verify-full");
            login.setProperty("sslrootcert", args[2]);
            login.setProperty("password", Files.readString(Path.of(args[3])).strip());
        }
        String sql = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + args[0] + "/" + database, login);
             Statement s = c.createStatement()) {
            boolean rows = s.execute(sql);
            while (true) {
                if (rows) {
                    try (ResultSet rs = s.getResultSet()) {
                        while (rs.next()) {
                            System.out.println(rs.getString(1));
                        }
                    }
                } else if (s.getUpdateCount() == -1) {
                    break;
                }
                rows = s.getMoreResults();
            }
        }
    }
}
