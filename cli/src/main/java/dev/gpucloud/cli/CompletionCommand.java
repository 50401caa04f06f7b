package dev.gpucloud.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gpucloud completion bash|zsh}: a completion script for every command and option, made by picocli from the
 * commands themselves, so it cannot fall behind them. zsh runs the same script through its bash compatibility.
 */
@Command(name = "completion", description = {"Print a shell completion script for gpucloud (every command and option).",
        "bash: source <(gpucloud completion bash); zsh: source <(gpucloud completion zsh)",
        "(or write it to a file your shell's start-up sources: docs/cli.md, \"Shell completion\")."})
final class CompletionCommand implements Callable<Integer> {

    /** bash or zsh. */
    enum Shell { BASH, ZSH }

    /** bash or zsh, any case. */
    static final class OfShell extends Choice<Shell> {
        OfShell() {
            super(Shell.class, "");
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "SHELL", converter = OfShell.class, description = "bash or zsh.")
    Shell shell;

    @Override
    public Integer call() {
        String script = AutoComplete.bash("gpucloud", spec.root().commandLine());
        PrintWriter out = spec.commandLine().getOut();
        if (shell == Shell.ZSH) {
            out.println("# gpucloud completion for zsh, through zsh's bash completion support");
            out.println("autoload -U +X compinit && compinit");
            out.println("autoload -U +X bashcompinit && bashcompinit");
        }
        out.print(script);
        // the same completion for the repository's wrapper, typed as ./gpucloud
        out.println("complete -F _complete_gpucloud -o default ./gpucloud");
        out.flush();
        return 0;
    }
}
