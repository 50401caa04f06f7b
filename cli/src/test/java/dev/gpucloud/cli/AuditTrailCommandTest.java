package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code gpucloud audit} against a real broker (the environment's KAFKA_BOOTSTRAP_SERVERS, or the project's
 * own): records written to audit.events come back through the filters; bad filters and an unreachable broker
 * are one line each.
 */
class AuditTrailCommandTest {

    static String bootstrap;
    static String acme;
    static String globex;
    static String initech;
    static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.MILLIS);

    record Result(int code, String out, String err) {
    }

    @BeforeAll
    static void writeAuditRecords() throws Exception {
        bootstrap = new KafkaTestResource().start().get("kafka.bootstrap.servers");
        String run = UUID.randomUUID().toString().substring(0, 8);
        acme = "acme-" + run;
        globex = "globex-" + run;
        initech = "initech-" + run;
        List<AuditEvent> events = List.of(
                new AuditEvent("ops", acme, List.of("operator"), "scheduler.SubmitJob", "job-old", NOW.minus(
                        Duration.ofHours(3)), "10.0.0.9:40000", AuditEvent.OK, ""),
                new AuditEvent("alice", acme, List.of("member"), "scheduler.SubmitJob", "job-1", NOW.minusSeconds(30),
                        "127.0.0.1:50001", AuditEvent.OK, ""),
                new AuditEvent("alice", acme, List.of("member"), "scheduler.CancelJob", "job-1", NOW.minusSeconds(20),
                        "127.0.0.1:50002", AuditEvent.OK, ""),
                new AuditEvent("bob", globex, List.of("member"), "scheduler.CancelJob", "job-1", NOW.minusSeconds(10),
                        "127.0.0.1:50003", "NOT_FOUND", "job 'job-1' not found"),
                new AuditEvent("fin", initech, List.of("finance"), "billing.invoice.adjust",
                        "-12.50 USD on 2025-07 (adjustment 7)", NOW.minusSeconds(8), "127.0.0.1:50004",
                        AuditEvent.OK, ""),
                new AuditEvent("ops", initech, List.of("operator"), "billing.invoice.close", "invoice " + initech
                        + " 2025-06", NOW.minusSeconds(5), "127.0.0.1:50005", "PERMISSION_DENIED",
                        "'ops' (operator) may not close invoices: that takes the role finance"));
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config, new StringSerializer(),
                new ByteArraySerializer())) {
            for (AuditEvent e : events) {
                ProducerRecord<String, byte[]> r = EventRecords.record(Topics.AUDIT_EVENTS, e.key(), e, "test");
                // the record's own time is when it was written: --since seeks by it
                producer.send(new ProducerRecord<>(r.topic(), null, e.occurredAt().toEpochMilli(), r.key(), r.value(),
                        r.headers())).get();
            }
            producer.send(new ProducerRecord<>(Topics.AUDIT_EVENTS.name(), acme,
                    "{not an audit record".getBytes(StandardCharsets.UTF_8))).get();
        }
    }

    static Result audit(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("audit"));
        if (!List.of(args).contains("--bootstrap-servers")) {
            all.addAll(List.of("--bootstrap-servers", bootstrap));
        }
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new Result(code, out.toString(), err.toString());
    }

    static List<String> rows(Result r) {
        return r.out().lines().skip(1).toList();
    }

    @Test
    void a_tenants_calls_come_back_as_a_table_oldest_first() {
        Result r = audit("--tenant", acme);

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().findFirst().orElseThrow())
                .contains("TIME", "WHO", "TENANT", "ACTION", "TARGET", "FROM", "RESULT");
        assertThat(rows(r)).hasSize(3);
        assertThat(rows(r).get(0)).contains("ops", acme, "scheduler.SubmitJob", "job-old", "10.0.0.9:40000", "OK");
        assertThat(rows(r).get(2)).contains("alice", "scheduler.CancelJob", "job-1", "127.0.0.1:50002");
        // the broker may hold earlier runs' garbage too: at least this run's is counted
        assertThat(r.err()).containsPattern("note: skipped [1-9][0-9]* record\\(s\\) of audit.events that are not"
                + " audit records");
    }

    @Test
    void finances_closes_and_adjustments_are_found_by_the_last_part_of_their_action() {
        assertThat(rows(audit("--tenant", initech, "--action", "adjust"))).singleElement().satisfies(row -> assertThat(
                row).contains("fin", "billing.invoice.adjust", "-12.50 USD on 2025-07", "OK"));
        assertThat(rows(audit("--tenant", initech, "--action", "Close"))).singleElement().satisfies(row -> assertThat(
                row).contains("ops", "billing.invoice.close", "PERMISSION_DENIED", "takes the role finance"));
    }

    @Test
    void filters_combine_who_action_since_and_limit() {
        assertThat(rows(audit("--tenant", acme, "--who", "alice"))).hasSize(2);
        assertThat(rows(audit("--tenant", acme, "--action", "submitjob"))).hasSize(2)
                .allSatisfy(row -> assertThat(row).contains("scheduler.SubmitJob"));
        assertThat(rows(audit("--tenant", acme, "--since", "1h"))).hasSize(2)
                .noneSatisfy(row -> assertThat(row).contains("job-old"));
        assertThat(rows(audit("--tenant", acme, "--limit", "1"))).singleElement()
                .satisfies(row -> assertThat(row).contains("scheduler.CancelJob"));
        Result refused = audit("--tenant", globex, "--action", "scheduler.CancelJob");
        assertThat(rows(refused)).singleElement()
                .satisfies(row -> assertThat(row).contains("bob", "NOT_FOUND: job 'job-1' not found"));
        // as people say it: the last part, or that without "Job"; a part of a word is not enough
        assertThat(rows(audit("--tenant", globex, "--action", "Cancel"))).hasSize(1);
        assertThat(rows(audit("--tenant", acme, "--action", "submit"))).hasSize(2);
        assertThat(rows(audit("--tenant", acme, "--action", "sub"))).isEmpty();
    }

    @Test
    void json_is_one_audit_record_a_line() {
        Result r = audit("--tenant", acme, "--since", "PT1H", "-o", "json");

        assertThat(r.code()).as(r.err()).isZero();
        List<AuditEvent> read = r.out().lines().map(line -> EventCodec.decode("audit",
                AuditEvent.class, line.getBytes(StandardCharsets.UTF_8))).toList();
        assertThat(read).extracting(AuditEvent::target).containsExactly("job-1", "job-1");
        assertThat(read.get(0).roles()).containsExactly("member");
    }

    @Test
    void bad_filters_are_one_line_saying_what_is_wrong() {
        assertBad(audit("--since", "yesterday"), "--since must be a duration up to 36500d such as 90s, 15m, 2h or 7d",
                "'yesterday'");
        assertBad(audit("--since", "0s"), "--since must be a duration");
        assertBad(audit("--since", "PT99999999999H"), "--since must be a duration up to 36500d");
        assertBad(audit("--since", "999999999d"), "--since must be a duration up to 36500d");
        assertBad(audit("--limit", "0"), "--limit must be within 1..100000, was 0");
        assertBad(audit("--limit", "many"), "'many' is not an int");
        assertBad(audit("--tenant", "Acme'; drop"), "--tenant must be a tenant id");
        assertBad(audit("--who", " "), "--who must name a subject");
        assertBad(audit("-o", "xml"), "'xml' is not one of text, wide, json, yaml");
    }

    @Test
    void an_unreachable_broker_is_one_line_with_what_to_do() {
        Result r = audit("--bootstrap-servers", "localhost:1", "--timeout", "2");

        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: cannot reach the broker at localhost:1")
                .contains("./gpucloud up", "KAFKA_BOOTSTRAP_SERVERS").containsOnlyOnce("\n")
                .doesNotContain("Exception");
        assertThat(r.out()).isEmpty();
    }

    static void assertBad(Result r, String... fragments) {
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: ").containsOnlyOnce("\n").contains(fragments)
                .contains("gpucloud audit --help");
        assertThat(r.out()).isEmpty();
    }
}
