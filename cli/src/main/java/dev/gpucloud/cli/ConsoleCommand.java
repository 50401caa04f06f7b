package dev.gpucloud.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code gpucloud console}: the link that signs the browser in to the web console (docs/console.md) with the
 * profile's token. The token rides in the link's fragment ({@code #token=...}), which a browser never sends to a
 * server, so it reaches no access log; the login page hands it to {@code /console/session} and forgets it.
 */
@Command(name = "console", description = {"Print a link that signs your browser in to the web console with this"
        + " profile's token (--open opens it with xdg-open).",
        "The token is in the link's #fragment, which the browser keeps to itself: treat the link as the token."})
final class ConsoleCommand implements Callable<Integer> {

    @CommandLine.ParentCommand
    GpucloudCli parent;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--open", description = "Open the link in the desktop's browser (xdg-open), where there is one.")
    boolean open;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Optional<String> token = Identity.token(parent.profile, parent.caFile, err);
        if (token.isEmpty()) {
            err.println("error: profile " + parent.profile + " has no token: log in with gpucloud login (on a stack"
                    + " that ./gpucloud up started: gpucloud login --dev --tenant T --role member)");
            err.flush();
            return 1;
        }
        String url = link(parent.scheduler, parent.caFile != null, token.get());
        out.println(url);
        out.flush();
        if (open) {
            Optional<Path> xdgOpen = onPath("xdg-open");
            if (xdgOpen.isEmpty()) {
                err.println("no xdg-open here: open the link above in your browser");
            } else {
                new ProcessBuilder(xdgOpen.get().toString(), url).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            }
            err.flush();
        }
        return 0;
    }

    /**
     * The console's sign-in link on the first scheduler of {@code servers} (any instance serves it): https where the
     * CLI speaks TLS to the scheduler, http where it speaks plaintext.
     */
    static String link(String servers, boolean tls, String token) {
        String first = servers.split(",")[0].strip();
        if (first.contains("://")) {
            first = first.substring(first.indexOf("://") + 3);
        }
        return (tls ? "https://" : "http://") + first + "/console/login#token=" + token;
    }

    private static Optional<Path> onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
