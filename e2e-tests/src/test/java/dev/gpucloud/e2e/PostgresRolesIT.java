package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The database that ./gpucloud up starts (docs/security.md, "PostgreSQL"): deploy/local/postgres.sh with
 * PG_SECURITY=tls runs the embedded server on a port of its own, and each service's database belongs to a role of
 * its own. Only that role may connect to it, only with its password, only over TLS; a client that checks the
 * server's certificate against the stack's CA gets through.
 */
class PostgresRolesIT {

    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path RUN_DIR = ROOT.resolve("e2e-tests/target/pg-roles-run");
    static final Path AUTH = RUN_DIR.resolve("postgres/auth");
    static final Path CA = RUN_DIR.resolve("tls/ca.pem");
    static final String SCHEDULER = "gpucloud_scheduler_it";
    static final String BILLING = "gpucloud_billing_it";
    static int port;

    @BeforeAll
    static void startSecuredServer() throws Exception {
        port = freePort();
        postgresSh(Map.of(), "start");
        // a CA of another stack, made the same way
        ProcessBuilder otherCa = new ProcessBuilder("bash", ROOT.resolve("deploy/local/tls.sh").toString(), "ca")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        otherCa.environment().put("GPUCLOUD_RUN_DIR", RUN_DIR.resolve("other").toString());
        Process made = otherCa.start();
        assertThat(made.waitFor(1, TimeUnit.MINUTES) && made.exitValue() == 0).as("tls.sh ca for another stack").isTrue();
    }

    @AfterAll
    static void stopServer() throws Exception {
        postgresSh(Map.of(), "stop");
    }

    @Test
    void each_service_role_reaches_its_own_database_over_tls_verifying_the_stacks_ca() throws Exception {
        for (String role : List.of(SCHEDULER, BILLING)) {
            try (Connection c = connect(role, role, password(role), verified());
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("select current_user, pg_get_userbyid(d.datdba), ssl.ssl, ssl.version"
                         + " from pg_database d, pg_stat_ssl ssl where d.datname = current_database()"
                         + " and ssl.pid = pg_backend_pid()")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).as("logged in as").isEqualTo(role);
                assertThat(rs.getString(2)).as("owner of " + role).isEqualTo(role);
                assertThat(rs.getBoolean(3)).as("over TLS").isTrue();
                assertThat(rs.getString(4)).isEqualTo("TLSv1.3");
            }
        }
        assertThat(new PostgresSh(Map.of()).output("client-ssl")).isEqualTo("verify-full");
    }

    @Test
    void billing_cannot_connect_to_the_schedulers_database_nor_the_scheduler_to_billings() {
        assertThatThrownBy(() -> connect(BILLING, SCHEDULER, password(BILLING), verified()).close())
                .isInstanceOf(SQLException.class).hasMessageContaining("permission denied for database");
        assertThatThrownBy(() -> connect(SCHEDULER, BILLING, password(SCHEDULER), verified()).close())
                .isInstanceOf(SQLException.class).hasMessageContaining("permission denied for database");
    }

    @Test
    void a_wrong_password_is_refused() {
        assertThatThrownBy(() -> connect(SCHEDULER, SCHEDULER, password(BILLING), verified()).close())
                .isInstanceOf(SQLException.class).hasMessageContaining("password authentication failed");
        assertThatThrownBy(() -> connect("postgres", "postgres", "", verified()).close())
                .isInstanceOf(SQLException.class);
    }

    @Test
    void a_plaintext_connection_is_refused_even_with_the_right_password() throws Exception {
        Properties plaintext = new Properties();
        plaintext.setProperty("sslmode", "disable");
        assertThatThrownBy(() -> connect(SCHEDULER, SCHEDULER, password(SCHEDULER), plaintext).close())
                .isInstanceOf(SQLException.class).hasMessageContaining("no pg_hba.conf entry")
                .hasMessageContaining("no encryption");
        assertThatThrownBy(() -> connect("postgres", "postgres", password("postgres"), plaintext).close())
                .isInstanceOf(SQLException.class).hasMessageContaining("no encryption");
    }

    @Test
    void a_client_trusting_another_ca_refuses_the_server() {
        Properties otherCa = new Properties();
        otherCa.setProperty("sslmode", "verify-full");
        otherCa.setProperty("sslrootcert", RUN_DIR.resolve("other/tls/ca.pem").toString());
        assertThatThrownBy(() -> connect(SCHEDULER, SCHEDULER, password(SCHEDULER), otherCa).close())
                .isInstanceOf(SQLException.class);
    }

    @Test
    void passwords_are_kept_for_their_owner_only_and_stored_as_scram() throws Exception {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(AUTH))).isEqualTo("rwx------");
        for (String name : List.of(SCHEDULER, BILLING, "postgres")) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(AUTH.resolve(name + ".password"))))
                    .as(name).isEqualTo("rw-------");
        }
        try (Connection c = connect("postgres", "postgres", password("postgres"), verified());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select rolname, rolpassword from pg_authid where rolname like 'gpucloud%'")) {
            int roles = 0;
            while (rs.next()) {
                assertThat(rs.getString(2)).as(rs.getString(1)).startsWith("SCRAM-SHA-256$");
                roles++;
            }
            assertThat(roles).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void a_database_the_shared_role_owned_is_handed_to_its_service_role_with_what_it_holds() throws Exception {
        String old = "gpucloud_billing_old";
        try (Connection c = connect("postgres", "postgres", password("postgres"), verified());
             Statement s = c.createStatement()) {
            s.execute("do $$ begin if not exists (select from pg_roles where rolname = 'gpucloud') then"
                    + " create role gpucloud login password 'gpucloud'; end if; end $$");
            s.execute("drop database if exists " + old);
            s.execute("create database " + old + " owner gpucloud");
        }
        try (Connection c = connect("postgres", old, password("postgres"), verified());
             Statement s = c.createStatement()) {
            s.execute("set role gpucloud");
            s.execute("create table invoices (id bigserial primary key, total bigint)");
            s.execute("create sequence invoice_numbers");
        }
        postgresSh(Map.of("GPUCLOUD_BILLING_DB", old), "start");
        try (Connection c = connect(old, old, password(old), verified());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select relname, pg_get_userbyid(relowner) from pg_class"
                     + " where relname in ('invoices', 'invoices_id_seq', 'invoice_numbers') order by relname")) {
            List<String> owners = new ArrayList<>();
            while (rs.next()) {
                owners.add(rs.getString(1) + " " + rs.getString(2));
            }
            assertThat(owners).containsExactly("invoice_numbers " + old, "invoices " + old, "invoices_id_seq " + old);
            s.execute("insert into invoices (total) values (1)");
        }
        assertThatThrownBy(() -> connect("gpucloud", old, "gpucloud", verified()).close())
                .as("the shared role, once the owner, may no longer connect")
                .isInstanceOf(SQLException.class).hasMessageContaining("permission denied for database");
    }

    static Properties verified() {
        Properties p = new Properties();
        p.setProperty("sslmode", "verify-full");
        p.setProperty("sslrootcert", CA.toString());
        return p;
    }

    static Connection connect(String user, String database, String password, Properties tls) throws SQLException {
        Properties p = new Properties();
        p.putAll(tls);
        p.setProperty("user", user);
        p.setProperty("password", password);
        p.setProperty("connectTimeout", "10");
        return DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/" + database, p);
    }

    static String password(String role) throws IOException {
        return Files.readString(AUTH.resolve(role + ".password")).strip();
    }

    static void postgresSh(Map<String, String> env, String... args) throws Exception {
        new PostgresSh(env).output(args);
    }

    /** deploy/local/postgres.sh on this test's run folder and port, secured as ./gpucloud up runs it. */
    record PostgresSh(Map<String, String> extraEnv) {
        String output(String... args) throws Exception {
            Files.createDirectories(RUN_DIR);
            Path log = RUN_DIR.resolve("postgres-sh.log");
            Path out = Files.createTempFile(RUN_DIR, "out", ".txt");
            List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("deploy/local/postgres.sh").toString()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile())
                    .redirectOutput(out.toFile())
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            Map<String, String> env = pb.environment();
            env.put("GPUCLOUD_RUN_DIR", RUN_DIR.toString());
            env.put("PGPORT", String.valueOf(port));
            env.put("PG_SECURITY", "tls");
            env.put("GPUCLOUD_SCHEDULER_DB", SCHEDULER);
            env.put("GPUCLOUD_BILLING_DB", BILLING);
            env.putAll(extraEnv);
            Process process = pb.start();
            if (!process.waitFor(4, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException("postgres.sh " + String.join(" ", args) + " did not finish in 4 minutes");
            }
            String output = Files.readString(out).strip();
            Files.delete(out);
            if (process.exitValue() != 0) {
                throw new IllegalStateException("postgres.sh " + String.join(" ", args) + " exited " + process.exitValue()
                        + ":\n" + Files.readString(log));
            }
            return output;
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
