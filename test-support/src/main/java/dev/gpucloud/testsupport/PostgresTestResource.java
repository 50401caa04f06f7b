package dev.gpucloud.testsupport;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/**
 * A real PostgreSQL for @QuarkusTest: the server at PGHOST:PGPORT (default localhost:5432) if it
 * answers, else whatever deploy/local/postgres.sh starts (the machine's cluster or an embedded one).
 * Init argument {@code database} names the service's test database.
 */
public class PostgresTestResource implements QuarkusTestResourceLifecycleManager {

    private String database = "postgres";

    @Override
    public void init(Map<String, String> initArgs) {
        database = initArgs.getOrDefault("database", database);
    }

    @Override
    public Map<String, String> start() {
        String host = LocalStack.env("PGHOST", "localhost");
        String port = LocalStack.env("PGPORT", "5432");
        String user = LocalStack.env("GPUCLOUD_DB_USER", "gpucloud");
        String password = LocalStack.env("GPUCLOUD_DB_PASSWORD", "gpucloud");
        if (!canLogIn(host, port, user, password)) {
            // Idempotent: starts a server only if none answers, and creates the role and databases if missing.
            LocalStack.run("postgres.sh", "start");
        }
        return Map.of(
                "quarkus.datasource.username", user,
                "quarkus.datasource.password", password,
                "quarkus.datasource.reactive.url", "postgresql://" + host + ":" + port + "/" + database,
                "quarkus.datasource.jdbc.url", "jdbc:postgresql://" + host + ":" + port + "/" + database);
    }

    private boolean canLogIn(String host, String port, String user, String password) {
        try (var c = java.sql.DriverManager.getConnection(
                "jdbc:postgresql://" + host + ":" + port + "/" + database + "?connectTimeout=3", user, password)) {
            return c.isValid(3);
        } catch (java.sql.SQLException e) {
            return false;
        }
    }

    @Override
    public void stop() {
        // Leave the server running: other test classes and modules use it too.
    }
}
