package dev.gpucloud.contracts.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BrokerSurveyTest {

    @Test
    void a_broker_without_the_inventory_topic_says_so() {
        assertThat(new BrokerSurvey.Survey("abc", false, List.of()).summary())
                .isEqualTo("cluster id abc, no gpu.inventory topic yet");
    }

    @Test
    void an_empty_inventory_says_no_hosts() {
        assertThat(new BrokerSurvey.Survey("abc", true, List.of()).summary())
                .isEqualTo("cluster id abc, no hosts in gpu.inventory");
    }

    @Test
    void a_long_inventory_names_the_first_hosts_and_counts_them_all() {
        assertThat(new BrokerSurvey.Survey("abc", true, List.of("h1", "h2", "h3", "h4", "h5", "h6")).summary())
                .isEqualTo("cluster id abc, 6 hosts in gpu.inventory (h1, h2, h3, h4, ...)");
    }

    @Test
    void one_host_is_singular() {
        assertThat(new BrokerSurvey.Survey("abc", true, List.of("sim-a100-0")).summary())
                .isEqualTo("cluster id abc, 1 host in gpu.inventory (sim-a100-0)");
    }
}
