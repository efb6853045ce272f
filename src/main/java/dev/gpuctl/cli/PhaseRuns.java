package dev.gpuctl.cli;

import dev.gpuctl.engine.MasterLock;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * A day-2 command's phases on the one engine (a function of a {@link Runner} that runs them, from the engine): connect with the usual ssh options, take the cluster's lock, stop
 * cleanly at Ctrl-C, and turn the result into an exit code with each failure described (host, step, command, exit,
 * stderr, log) and {@code next} as what to do about it.
 */
final class PhaseRuns {
    private PhaseRuns() {}

    /** Checks that each name is a node of the inventory (exit 2 otherwise). */
    static void checkNodes(Inventory inv, List<String> names, String what) {
        for (String h : names) {
            if (inv.node(h).isEmpty()) {
                throw new GpuctlException(ExitCode.USAGE, "unknown host '" + h + "' for " + what + " (the inventory has: "
                    + String.join(", ", inv.nodes().stream().map(n -> n.name()).toList()) + "; the inventory itself is given with -i FILE)");
            }
        }
    }

    static Runner.Result run(Inventory inv, Path file, Function<Runner, Runner.Result> phases, boolean dryRun, boolean acceptNew, Duration commandTimeout,
                             PrintWriter err, String command, String next) {
        SshOptions ssh = SshOptions.defaults(acceptNew);
        Inventories.checkIdentityFiles(file, inv.nodes(), ssh);
        Runner runner = new Runner(inv, node -> Remotes.open(node, ssh), err, new Runner.Options(dryRun, 16, Set.of(), commandTimeout));
        runner.lockingMaster(MasterLock.holder(System.getProperty("user.name"), BootstrapCommand.localHostName(),
            ProcessHandle.current().pid(), Instant.now()));
        Runner.Result result;
        try (Interrupts ignored = Interrupts.during(new Interrupts.Stoppable() {
                @Override public void requestStop() { runner.requestStop(); }
                @Override public void abort() { runner.abort(); }
            }, Duration.ofSeconds(BootstrapCommand.INTERRUPT_GRACE_SECONDS), err)) {
            result = phases.apply(runner);
        }
        if (result.wasInterrupted()) {
            StringBuilder sb = new StringBuilder("interrupted; where each host stopped:\n");
            result.interrupted().forEach(w -> sb.append("  ").append(w).append('\n'));
            for (StepFailure f : result.failures()) sb.append(f.describe());
            sb.append("Run the same command again to resume.\nLogs: ").append(result.logDir());
            throw new GpuctlException(ExitCode.INTERRUPTED, sb.toString());
        }
        if (result.preflightRefused()) {
            throw new GpuctlException(ExitCode.PREFLIGHT_REFUSED, command + " refused; nothing was changed:\n"
                + String.join("\n", result.preflightProblems()) + "\nLogs: " + result.logDir());
        }
        if (!result.failures().isEmpty()) {
            StringBuilder sb = new StringBuilder(command + " stopped:\n");
            for (StepFailure f : result.failures()) sb.append(f.describe());
            sb.append(next);
            throw new GpuctlException(ExitCode.STEP_FAILED, sb.toString());
        }
        return result;
    }
}
