package dev.gpuctl.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "gpuctl",
    scope = ScopeType.INHERIT, // --help and --version on every subcommand too
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Turns a few GPU servers into a Kubernetes cluster over SSH, and keeps them healthy.")
// the exit codes at the end of every command's help come from ExitCode (Main.exitCodes)
public final class GpuctlCommand implements Runnable {
    /**
     * The subcommands in the order help lists them. Main registers only the one a command line names (building
     * every command's model by reflection is most of the start-up time), and all of them for help, completion
     * and a command line it does not recognise (so a typo still gets suggestions).
     */
    static final LinkedHashMap<String, Class<?>> SUBCOMMANDS = new LinkedHashMap<>();

    static {
        SUBCOMMANDS.put("plan", PlanCommand.class);
        SUBCOMMANDS.put("bootstrap", BootstrapCommand.class);
        SUBCOMMANDS.put("join-token", JoinTokenCommand.class);
        SUBCOMMANDS.put("verify", VerifyCommand.class);
        SUBCOMMANDS.put("certs", CertsCommand.class);
        SUBCOMMANDS.put("upgrade", UpgradeCommand.class);
        SUBCOMMANDS.put("gpus", GpusCommand.class);
        SUBCOMMANDS.put("job", JobCommand.class);
        SUBCOMMANDS.put("queue", QueueCommand.class);
        SUBCOMMANDS.put("usage", UsageCommand.class);
        SUBCOMMANDS.put("kubeconfig", KubeconfigCommand.class);
        SUBCOMMANDS.put("backup", BackupCommand.class);
        SUBCOMMANDS.put("restore", RestoreCommand.class);
        SUBCOMMANDS.put("drain", DrainCommand.class);
        SUBCOMMANDS.put("uncordon", UncordonCommand.class);
        SUBCOMMANDS.put("repair", RepairCommand.class);
        SUBCOMMANDS.put("remove-node", RemoveNodeCommand.class);
        SUBCOMMANDS.put("reset", ResetCommand.class);
        SUBCOMMANDS.put("completion", CompletionCommand.class);
    }

    final Map<String, String> env;

    @Spec CommandSpec spec;
    @Mixin VerbosityMixin verbosity;

    GpuctlCommand(Map<String, String> env) { this.env = env; }

    @Override public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw new GpuctlException(ExitCode.USAGE, "a command is required (see above)");
    }
}
