package dev.gpucloud.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Metadata;
import io.grpc.Status;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules a client follows to find the leader; the retry loop against real servers is tested in the CLI. */
class LeaderFailoverTest {

    static Metadata leaderAt(String address) {
        Metadata trailers = new Metadata();
        trailers.put(LeaderFailover.LEADER_TRAILER, address);
        return trailers;
    }

    @Test
    void back_off_starts_at_200_ms_doubles_and_stops_at_2_s() {
        assertThat(List.of(0, 1, 2, 3, 4, 5, 40).stream().map(LeaderFailover::backoff).map(Duration::toMillis))
                .containsExactly(200L, 400L, 800L, 1600L, 2000L, 2000L, 2000L);
    }

    @Test
    void an_address_list_is_trimmed_without_blanks_or_repeats_in_the_order_given() {
        assertThat(LeaderFailover.parseAddresses(" localhost:8091, ,localhost:8081,localhost:8091"))
                .containsExactly("localhost:8091", "localhost:8081");
        assertThat(LeaderFailover.parseAddresses("localhost:8081")).containsExactly("localhost:8081");
        assertThatThrownBy(() -> LeaderFailover.parseAddresses(" , ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void the_next_address_goes_round_and_an_unlisted_one_is_followed_by_the_first() {
        List<String> list = List.of("a:1", "b:2", "c:3");
        assertThat(LeaderFailover.nextAfter(list, "a:1")).isEqualTo("b:2");
        assertThat(LeaderFailover.nextAfter(list, "c:3")).isEqualTo("a:1");
        assertThat(LeaderFailover.nextAfter(list, "leader-from-a-trailer:9")).isEqualTo("a:1");
        assertThat(LeaderFailover.nextAfter(List.of("a:1"), "a:1")).isEqualTo("a:1");
    }

    @Test
    void the_leader_is_read_from_the_trailer_and_a_blank_or_missing_one_is_none() {
        Status standby = Status.UNAVAILABLE.withDescription("scheduler-1 is a standby");
        assertThat(LeaderFailover.leaderIn(standby.asRuntimeException(leaderAt("localhost:8081"))))
                .contains("localhost:8081");
        assertThat(LeaderFailover.leaderIn(standby.asRuntimeException(leaderAt(" ")))).isEmpty();
        assertThat(LeaderFailover.leaderIn(standby.asRuntimeException())).isEmpty();
    }

    @Test
    void a_notice_says_who_turned_the_call_away_and_where_it_goes() {
        Status standby = Status.UNAVAILABLE
                .withDescription("scheduler-1 is a standby; the leader is scheduler-0 at localhost:8081");
        assertThat(LeaderFailover.notice("localhost:8091", standby, "localhost:8081", true))
                .isEqualTo("scheduler-1 is a standby; retrying at the leader localhost:8081");
        Status noLeader = Status.UNAVAILABLE.withDescription("scheduler-1 is a standby; no leader is known");
        assertThat(LeaderFailover.notice("localhost:8091", noLeader, "localhost:8081", false))
                .isEqualTo("localhost:8091: scheduler-1 is a standby; retrying at localhost:8081");
        Status refused = Status.UNAVAILABLE.withDescription("io exception").withCause(new ConnectException("refused"));
        assertThat(LeaderFailover.notice("localhost:8081", refused, "localhost:8091", false))
                .isEqualTo("localhost:8081: connection refused; retrying at localhost:8091");
        assertThat(LeaderFailover.notice("localhost:8081", Status.UNAVAILABLE, "localhost:8091", false))
                .isEqualTo("localhost:8081 is unavailable; retrying at localhost:8091");
    }
}
