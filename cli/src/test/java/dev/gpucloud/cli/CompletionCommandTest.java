package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** gpucloud completion bash|zsh prints a script that knows the commands; anything else is one line. */
class CompletionCommandTest {

    static GpucloudCliTest.Result cli(String... args) {
        return GpucloudCliTest.cliAt("localhost:1", args);
    }

    @Test
    void bash_gets_a_script_naming_every_command_and_the_wrapper() {
        GpucloudCliTest.Result r = cli("completion", "bash");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("_complete_gpucloud", "complete -F _complete_gpucloud -o default gpucloud",
                "complete -F _complete_gpucloud -o default ./gpucloud");
        for (String command : new String[] {"submit", "jobs", "get", "watch", "cancel", "logs", "nodes", "capacity",
                "usage", "quota", "audit", "invoice", "config", "set-context", "use-context", "get-contexts",
                "current-context", "completion"}) {
            assertThat(r.out()).as(command).contains(command);
        }
        assertThat(r.out()).contains("--follow", "--rank", "--no-headers", "--server", "--context");
    }

    @Test
    void zsh_gets_the_same_script_through_bashcompinit() {
        GpucloudCliTest.Result zsh = cli("completion", "ZSH");
        assertThat(zsh.code()).isZero();
        assertThat(zsh.out()).contains("autoload -U +X bashcompinit && bashcompinit")
                .endsWith(cli("completion", "bash").out());
    }

    @Test
    void another_shell_or_none_is_one_line() {
        GpucloudCliTest.Result fish = cli("completion", "fish");
        assertThat(fish.code()).isEqualTo(2);
        GpucloudCliTest.assertOneLineError(fish, "'fish' is not one of bash, zsh (any case)");
        GpucloudCliTest.assertOneLineError(cli("completion"), "SHELL");
    }
}
