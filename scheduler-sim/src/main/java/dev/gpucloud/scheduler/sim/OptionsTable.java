package dev.gpucloud.scheduler.sim;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A simulator command's options from a table of {@code {name, label, description}} rows: a null label is a flag,
 * any other takes one value, read as text. The commands keep their options as data so that their help, their
 * parsing and their docs cannot drift apart.
 */
public final class OptionsTable {

    private OptionsTable() {
    }

    /** The command line as picocli parses it and prints its help, with {@code -h/--help}. */
    public static CommandLine commandLine(String name, String synopsis, String description, String[][] options) {
        CommandSpec spec = CommandSpec.create().name(name);
        spec.usageMessage().customSynopsis(synopsis).description(description).width(110);
        for (String[] o : options) {
            // picocli formats descriptions: a literal % must be %%
            OptionSpec.Builder b = OptionSpec.builder("--" + o[0]).description(o[2].replace("%", "%%"));
            spec.addOption(o[1] == null ? b.arity("0").type(boolean.class).build()
                    : b.paramLabel(o[1]).arity("1").type(String.class).build());
        }
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("this help").build());
        return new CommandLine(spec);
    }
}
