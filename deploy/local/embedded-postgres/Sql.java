import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/** Runs one SQL statement as the embedded server's superuser and prints the first column of each row. */
public class Sql {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + args[0] + "/postgres", "postgres", "");
             Statement s = c.createStatement()) {
            if (s.execute(args[1])) {
                try (ResultSet rs = s.getResultSet()) {
                    while (rs.next()) {
                        System.out.println(rs.getString(1));
                    }
                }
            }
        }
    }
}
