package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The console's sign-in link: the first scheduler, https where the CLI speaks TLS, the token in the fragment. */
class ConsoleCommandTest {

    @Test
    void the_link_names_the_first_scheduler_with_the_token_in_its_fragment() {
        assertThat(ConsoleCommand.link("localhost:8081,localhost:8091", true, "T.K.N"))
                .isEqualTo("https://localhost:8081/console/login#token=T.K.N");
        assertThat(ConsoleCommand.link("sched.example:443", false, "abc"))
                .isEqualTo("http://sched.example:443/console/login#token=abc");
    }
}
