package dev.gpucloud.billing.repository;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.billing.fold.PartitionFold;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Snapshots against the real database: the stored offset fences a consumer that lost its partition (a zombie
 * after a rebalance), a restart resumes from the stored offset, and replayed usage changes nothing. Each test
 * uses a topic name of its own (no Kafka topic is needed: the store only sees names and offsets).
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class FoldStoreTest {

    private static final Instant T0 = Instant.parse("2025-06-10T08:00:00Z");
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    FoldStore store;

    @Inject
    Pool pool;

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final String topic = "usage.events.fold-store-test-" + run;

    @Test
    void a_zombies_stale_snapshot_is_refused_and_writes_nothing() {
        String alloc = "alloc-" + run;
        String zombieOnly = "alloc-zombie-" + run;
        long start = store.loadOffset(topic, 0, 0).await().atMost(WAIT);
        PartitionFold owner = new PartitionFold(topic, 0, start);
        PartitionFold zombie = new PartitionFold(topic, 0, start); // loaded the same offset before the rebalance

        owner.admit(0);
        owner.fold("e1", usage(alloc, 0, 100));
        owner.admit(1);
        owner.fold("e2", usage(alloc, 100, 200));
        write(owner);

        zombie.admit(0);
        zombie.fold("e1", usage(alloc, 0, 100));
        zombie.admit(1);
        zombie.fold("e3", usage(zombieOnly, 0, 5000));
        assertThatThrownBy(() -> store.write(List.of(zombie.snapshot())).await().atMost(WAIT))
                .isInstanceOf(StaleFoldException.class)
                .hasMessageContaining(topic + "-0")
                .satisfies(e -> assertThat(((StaleFoldException) e).stale())
                        .containsExactly(new StaleFoldException.Partition(topic, 0)));

        assertThat(store.loadOffset(topic, 0, 0).await().atMost(WAIT)).as("the owner's offset stands").isEqualTo(2);
        assertThat(intervals(alloc)).containsExactly(seconds(0, 200));
        assertThat(intervals(zombieOnly)).as("nothing of the zombie's snapshot").isEmpty();
        assertThat(count("SELECT count(*) AS n FROM allocation WHERE allocation_id = $1", zombieOnly)).isZero();
    }

    @Test
    void one_stale_partition_fails_the_whole_snapshot() {
        String alloc = "alloc-p1-" + run;
        store.loadOffset(topic, 0, 7).await().atMost(WAIT);
        store.loadOffset(topic, 1, 0).await().atMost(WAIT);
        PartitionFold stale = new PartitionFold(topic, 0, 3); // the store holds 7
        stale.admit(3);
        PartitionFold fresh = new PartitionFold(topic, 1, 0);
        fresh.admit(0);
        fresh.fold("e1", usage(alloc, 0, 100));

        assertThatThrownBy(() -> store.write(List.of(stale.snapshot(), fresh.snapshot())).await().atMost(WAIT))
                .isInstanceOf(StaleFoldException.class);

        assertThat(store.loadOffset(topic, 1, 0).await().atMost(WAIT)).as("rolled back").isZero();
        assertThat(intervals(alloc)).isEmpty();
    }

    @Test
    void a_restart_resumes_from_the_stored_offset_and_a_replay_changes_nothing() {
        String alloc = "alloc-restart-" + run;
        long fallback = 40; // where the group's committed offset would put a partition never snapshotted
        PartitionFold first = new PartitionFold(topic, 2, store.loadOffset(topic, 2, fallback).await().atMost(WAIT));
        assertThat(first.position()).isEqualTo(40);
        for (int i = 0; i < 3; i++) {
            assertThat(first.admit(40 + i)).isEqualTo(PartitionFold.Admission.FOLD);
            first.fold("e" + i, usage(alloc, 100L * i, 100L * i + 60));
        }
        write(first);

        // a new process: the stored offset, not the fallback, is where it starts; redelivered records are skipped
        PartitionFold restarted = new PartitionFold(topic, 2, store.loadOffset(topic, 2, 0).await().atMost(WAIT));
        assertThat(restarted.position()).isEqualTo(43);
        for (int i = 0; i < 3; i++) {
            assertThat(restarted.admit(40 + i)).isEqualTo(PartitionFold.Admission.BELOW);
        }
        assertThat(restarted.admit(43)).isEqualTo(PartitionFold.Admission.FOLD);
        restarted.fold("e3", usage(alloc, 150, 300));
        write(restarted);
        assertThat(intervals(alloc)).containsExactly(seconds(0, 60), seconds(100, 300));

        // usage written again (a crash after the write but before the fold knew it committed): nothing changes
        PartitionFold replay = new PartitionFold(topic, 2, 44);
        replay.admit(44);
        replay.fold("e0", usage(alloc, 0, 60));
        replay.fold("e3", usage(alloc, 150, 300));
        write(replay);
        assertThat(intervals(alloc)).containsExactly(seconds(0, 60), seconds(100, 300));
        assertThat(store.loadOffset(topic, 2, 0).await().atMost(WAIT)).isEqualTo(45);
    }

    private void write(PartitionFold fold) {
        PartitionFold.Snapshot snapshot = fold.snapshot();
        store.write(List.of(snapshot)).await().atMost(WAIT);
        fold.committed(snapshot);
    }

    private static UsageEvent usage(String alloc, long from, long to) {
        return new UsageEvent(alloc, "job-1", "fold-store-test", "node-1", T0.plusSeconds(from), T0.plusSeconds(to),
                Sku.wholeGpu(GpuModels.A100_SXM4_40GB), 1, CapacityType.ON_DEMAND, "us-east-1a");
    }

    private static String seconds(long from, long to) {
        return T0.plusSeconds(from) + "/" + T0.plusSeconds(to);
    }

    private List<String> intervals(String alloc) {
        List<String> intervals = new ArrayList<>();
        for (Row row : pool.preparedQuery("SELECT from_ts, to_ts FROM allocation_interval WHERE allocation_id = $1 "
                + "ORDER BY from_ts").execute(Tuple.of(alloc)).await().atMost(WAIT)) {
            intervals.add(row.getOffsetDateTime("from_ts").toInstant() + "/" + row.getOffsetDateTime("to_ts").toInstant());
        }
        return intervals;
    }

    private long count(String sql, String arg) {
        return pool.preparedQuery(sql).execute(Tuple.of(arg)).await().atMost(WAIT).iterator().next().getLong("n");
    }
}
