package dev.gpucloud.cli;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpucloud.client.LeaderFailover;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gpucloud config}: the named targets (contexts) the CLI keeps in {@link Contexts#file()}, as kubectl's
 * {@code config} subcommands keep theirs. These commands read and write that file only; they call no server.
 */
@Command(name = "config", description = {"Contexts: named targets (a scheduler, the CA to trust there, the profile"
        + " whose token to send), one of them current.",
        "Precedence for each setting: flag, then environment, then the context, then the default (docs/cli.md)."},
        subcommands = {ConfigCommands.SetContext.class, ConfigCommands.UseContext.class,
                ConfigCommands.GetContexts.class, ConfigCommands.CurrentContext.class,
                ConfigCommands.DeleteContext.class})
final class ConfigCommands implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "say what to do: config set-context, use-context,"
                + " get-contexts, current-context or delete-context");
    }

    static String name(String name, CommandLine.Model.CommandSpec spec) {
        try {
            return Contexts.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    @Command(name = "set-context", description = {"Make a context, or change the settings given of one there is.",
            "An empty value (--ca-file \"\") removes that setting from the context."})
    static class SetContext implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME", description = "The context's name.")
        String name;
        @Option(names = {"--server", "--scheduler"}, paramLabel = "HOST:PORT[,...]",
                description = "The scheduler's gRPC address, or every instance's, comma-separated.")
        String server;
        @Option(names = "--ca-file", paramLabel = "PEM", description = "Speak TLS there, trusting this CA (kept as an"
                + " absolute path); without one, plaintext.")
        String caFile;
        @Option(names = "--profile", paramLabel = "NAME", description = "Send the token ./gpucloud login stored for"
                + " this profile.")
        String profile;
        @Option(names = "--use", description = "Also make it the current context.")
        boolean use;

        @Override
        public Integer call() {
            name(name, spec);
            Contexts.Config config = Contexts.read();
            Contexts.Context before = config.contexts().get(name);
            if (server == null && caFile == null && profile == null && (before == null || !use)) {
                throw new CommandLine.ParameterException(spec.commandLine(), before == null
                        ? "context '" + name + "' is new: give it at least --server HOST:PORT (and --ca-file, --profile)"
                        : "nothing to change in context '" + name + "': give --server, --ca-file or --profile");
            }
            String newServer = pick(server, before == null ? null : before.server());
            if (newServer != null) {
                try {
                    newServer = String.join(",", LeaderFailover.parseAddresses(newServer));
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--server: " + e.getMessage());
                }
                if (!newServer.matches("[A-Za-z0-9.:\\[\\]_-]+(,[A-Za-z0-9.:\\[\\]_-]+)*")) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--server must be HOST:PORT, or"
                            + " several comma-separated, was '" + GpucloudCli.clip(server, 64) + "'");
                }
            }
            String newCa = pick(caFile, before == null ? null : before.caFile());
            if (caFile != null && !caFile.isEmpty()) {
                Path pem = Path.of(caFile).toAbsolutePath().normalize();
                if (!Files.isReadable(pem) || Files.isDirectory(pem)) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--ca-file: no readable file " + pem);
                }
                newCa = pem.toString();
            }
            String newProfile = pick(profile, before == null ? null : before.profile());
            if (newProfile != null) {
                try {
                    Credentials.file(newProfile);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
                }
            }
            Contexts.Context after = new Contexts.Context(newServer, newCa, newProfile);
            Map<String, Contexts.Context> contexts = config.contexts();
            contexts.put(name, after);
            Contexts.write(new Contexts.Config(use ? name : config.current(), contexts));
            PrintWriter out = spec.commandLine().getOut();
            out.println((before == null ? "made context " : "changed context ") + name + ": " + describe(after)
                    + (use ? "; it is current" : ""));
            out.flush();
            return 0;
        }

        /** The new value where one is given ("" removes it), else the old one. */
        private static String pick(String given, String old) {
            if (given == null) {
                return old;
            }
            return given.isBlank() ? null : given.strip();
        }
    }

    static String describe(Contexts.Context c) {
        return "server " + (c.server() == null ? "(not set)" : c.server()) + ", "
                + (c.caFile() == null ? "plaintext" : "TLS trusting " + c.caFile()) + ", profile "
                + (c.profile() == null ? "(not set)" : c.profile());
    }

    @Command(name = "use-context", description = "Make a context the current one: later commands use its settings.")
    static class UseContext implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME", description = "A context that set-context made.")
        String name;

        @Override
        public Integer call() {
            name(name, spec);
            Contexts.Config config = Contexts.read();
            Contexts.named(config, name);
            Contexts.write(new Contexts.Config(name, config.contexts()));
            spec.commandLine().getOut().println("switched to context " + name);
            spec.commandLine().getOut().flush();
            return 0;
        }
    }

    @Command(name = "get-contexts", description = "List the contexts; CURRENT marks the current one with *.")
    static class GetContexts implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @CommandLine.Mixin
        Output output;

        @Override
        public Integer call() {
            output.format(Output.Format.TEXT, Output.Format.WIDE, Output.Format.JSON, Output.Format.YAML);
            Contexts.Config config = Contexts.read();
            PrintWriter out = spec.commandLine().getOut();
            if (output.structured()) {
                ObjectNode tree = JsonNodeFactory.instance.objectNode();
                if (config.current() == null) {
                    tree.putNull("currentContext");
                } else {
                    tree.put("currentContext", config.current());
                }
                ObjectNode contexts = tree.putObject("contexts");
                config.contexts().forEach((name, c) -> {
                    ObjectNode one = contexts.putObject(name);
                    one.put("server", c.server());
                    one.put("caFile", c.caFile());
                    one.put("profile", c.profile());
                });
                out.print(output.document(tree));
                out.flush();
                return 0;
            }
            Output.Table table = new Output.Table("CURRENT", "NAME", "SERVER", "CA-FILE", "PROFILE");
            config.contexts().forEach((name, c) -> table.row(name.equals(config.current()) ? "*" : "", name,
                    c.server(), c.caFile(), c.profile()));
            output.print(out, table);
            return 0;
        }
    }

    @Command(name = "current-context", description = "Print the current context's name.")
    static class CurrentContext implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            String current = Contexts.read().current();
            if (current == null) {
                throw new Contexts.Problem("no current context: commands use the flags, the environment and the"
                        + " defaults (gpucloud config use-context NAME picks one; get-contexts lists them)");
            }
            spec.commandLine().getOut().println(current);
            spec.commandLine().getOut().flush();
            return 0;
        }
    }

    @Command(name = "delete-context", description = "Forget a context (the current one too: then none is current).")
    static class DeleteContext implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            name(name, spec);
            Contexts.Config config = Contexts.read();
            Contexts.named(config, name);
            Map<String, Contexts.Context> contexts = config.contexts();
            contexts.remove(name);
            boolean wasCurrent = name.equals(config.current());
            Contexts.write(new Contexts.Config(wasCurrent ? null : config.current(), contexts));
            spec.commandLine().getOut().println("deleted context " + name + (wasCurrent ? "; no context is current" : ""));
            spec.commandLine().getOut().flush();
            return 0;
        }
    }
}
