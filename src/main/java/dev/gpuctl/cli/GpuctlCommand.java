package dev.gpuctl.cli;

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
    description = "Turns a few GPU servers into a Kubernetes cluster over SSH, and keeps them healthy.",
    subcommands = {PlanCommand.class, BootstrapCommand.class, JoinTokenCommand.class, VerifyCommand.class, GpusCommand.class, JobCommand.class, CompletionCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:ok",
        "1:a step failed on a host",
        "2:usage or inventory error",
        "3:preflight refused (nothing was changed)",
        "4:verify found a problem",
        "130:interrupted"})
public final class GpuctlCommand implements Runnable {
    final Map<String, String> env;

    @Spec CommandSpec spec;
    @Mixin VerbosityMixin verbosity;

    GpuctlCommand(Map<String, String> env) { this.env = env; }

    @Override public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw new GpuctlException(ExitCode.USAGE, "a command is required (see above)");
    }
}
