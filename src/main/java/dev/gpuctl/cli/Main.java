package dev.gpuctl.cli;

import dev.gpuctl.engine.StateDir;
import dev.gpuctl.text.Terminal;
import dev.gpuctl.remote.Remotes;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/** Entry point: builds the command line, maps every outcome to an {@link ExitCode}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        // what libraries print (sshj's log with --verbose quotes what a server sent) is escaped too
        System.setErr(Terminal.escaping(new java.io.FileOutputStream(java.io.FileDescriptor.err)));
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true), System.getenv()));
    }

    /** Subcommands that never connect to a host. */
    private static final java.util.Set<String> OFFLINE = java.util.Set.of("plan", "completion");

    /**
     * Whether the parsed command line runs a command that connects to hosts (every subcommand but plan and completion),
     * not asking for help or the version: only then is sshj's configuration made ahead ({@link Remotes#prepareSsh}).
     */
    static boolean connects(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult r = parsed; r != null; r = r.hasSubcommand() ? r.subcommand() : null) {
            if (r.isUsageHelpRequested() || r.isVersionHelpRequested()) return false;
        }
        return parsed.hasSubcommand() && !OFFLINE.contains(parsed.subcommand().commandSpec().name());
    }

    /** Runs gpuctl with the given streams and environment; returns the exit code. Used by tests too. */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env) {
        CommandLine cl = commandLine(env, args);
        // hosts' text (os-release, command output, node names) is quoted in messages: nothing in it may act on the terminal
        PrintWriter safeOut = Terminal.escaping(out);
        PrintWriter safeErr = Terminal.escaping(err);
        cl.setOut(safeOut);
        cl.setErr(safeErr);
        int code = cl.execute(args);
        safeOut.flush();
        safeErr.flush();
        out.flush();
        err.flush();
        return code;
    }

    static CommandLine commandLine(Map<String, String> env) {
        return commandLine(env, new String[0]);
    }

    /** Ends every command's --help with the exit codes it can end with, from {@link ExitCode}. */
    static void exitCodes(CommandLine cl) {
        var usage = cl.getCommandSpec().usageMessage();
        usage.exitCodeListHeading("%nExit codes:%n");
        usage.exitCodeList(ExitCode.helpList(cl.getCommandSpec().qualifiedName()));
        List<String> examples = Examples.of(cl.getCommandSpec().qualifiedName());
        if (!examples.isEmpty()) {
            usage.footerHeading("%nExamples:%n");
            usage.footer(examples.stream().map(e -> "  " + e.replace("%", "%%")).toArray(String[]::new));
            // Examples, then the exit codes last
            List<String> keys = new ArrayList<>(cl.getHelpSectionKeys());
            keys.removeAll(List.of(CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER_HEADING,
                CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER));
            int at = keys.indexOf(CommandLine.Model.UsageMessageSpec.SECTION_KEY_EXIT_CODE_LIST_HEADING);
            keys.addAll(at, List.of(CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER_HEADING,
                CommandLine.Model.UsageMessageSpec.SECTION_KEY_FOOTER));
            cl.setHelpSectionKeys(keys);
        }
        for (CommandLine sub : cl.getSubcommands().values()) exitCodes(sub);
    }

    /** The command line for these arguments: the root, with the subcommand they name (see GpuctlCommand.SUBCOMMANDS). */
    static CommandLine commandLine(Map<String, String> env, String[] args) {
        CommandLine cl = new CommandLine(new GpuctlCommand(env));
        String named = null;
        for (String a : args) {
            if (!a.startsWith("-")) {
                named = a;
                break;
            }
        }
        boolean one = named != null && GpuctlCommand.SUBCOMMANDS.containsKey(named) && !named.equals("completion");
        boolean versionOnly = named == null && Arrays.stream(args).anyMatch(a -> a.equals("--version") || a.equals("-V"));
        for (var sub : GpuctlCommand.SUBCOMMANDS.entrySet()) {
            if (!versionOnly && (!one || sub.getKey().equals(named))) cl.addSubcommand(sub.getKey(), sub.getValue());
        }
        exitCodes(cl);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        // Once the arguments are parsed (--verbose has set the log levels before sshj makes its first logger), sshj's
        // configuration is made on a thread of its own while the command reads its inventory (docs/performance.md)
        cl.setExecutionStrategy(parsed -> {
            if (connects(parsed)) Remotes.prepareSsh();
            return new CommandLine.RunLast().execute(parsed);
        });
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            PrintWriter e = cmd.getErr();
            if (ex instanceof GpuctlException g) {
                e.println("gpuctl: " + g.getMessage());
                if (VerbosityMixin.isVerbose() && g.getCause() != null) g.getCause().printStackTrace(e);
                return g.exitCode().code();
            }
            for (Throwable t = ex; t != null; t = t.getCause()) {
                if (t instanceof StateDir.Refused r) {
                    e.println("gpuctl: " + r.getMessage());
                    return ExitCode.USAGE.code();
                }
            }
            e.println("gpuctl: internal error: " + ex);
            if (VerbosityMixin.isVerbose()) ex.printStackTrace(e);
            else e.println("(run again with --verbose for the stack trace)");
            return ExitCode.STEP_FAILED.code();
        });
        cl.setExitCodeExceptionMapper(ex -> ExitCode.USAGE.code());
        cl.setParameterExceptionHandler((ex, rejected) -> {
            CommandLine cmd = ex.getCommandLine();
            PrintWriter e = cmd.getErr();
            e.println("gpuctl: " + ex.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(ex, e);
            e.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
            return ExitCode.USAGE.code();
        });
        return cl;
    }
}
