package dev.gpuctl.cli;

import dev.gpuctl.workflow.BootstrapWorkflow;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.net.CidrCheck;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "bootstrap",
    description = {"Preflight every host (read-only), then run the steps in order, hosts in parallel.",
        "Re-running changes nothing that is already right."})
final class BootstrapCommand implements Callable<Integer> {
    @Option(names = "--only", split = ",", paramLabel = "STEP", description = "Only these steps (preflight always runs): ${COMPLETION-CANDIDATES}",
        completionCandidates = StepIds.class) List<String> only = List.of();
    @Option(names = "--hosts", split = ",", paramLabel = "NAME", description = "Only these hosts.") List<String> hosts = List.of();
    @Option(names = "--concurrency", defaultValue = "16", paramLabel = "N", converter = Converters.PositiveInt.class,
        description = "Hosts worked on at once, at least 1 (default ${DEFAULT-VALUE}).") int concurrency;
    @Mixin CommandTimeoutOption commandTimeout;
    @Option(names = "--wait-timeout", paramLabel = "DURATION", converter = Converters.DurationValue.class,
        description = "Longest wait for what settles after a change (pods running, nodes Ready, GPUs allocatable), e.g. 5m"
            + " (a bare number is seconds); default: each step's own (up to 5 min).")
    Duration waitTimeout;
    @Mixin ChangeOptions.OnInventory options;
    @Spec CommandSpec spec;
    @ParentCommand GpuctlCommand parent;

    static final class StepIds implements Iterable<String> {
        @Override public Iterator<String> iterator() { return BootstrapWorkflow.stepIds().iterator(); }
    }

    /** How long the commands running at Ctrl-C may take to finish before they are cut off. */
    static final int INTERRUPT_GRACE_SECONDS = 30;

    static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    @Override public Integer call() {
        ChangeOptions.Opened opened = options.open(parent.env, "bootstrap");
        Inventory inv = opened.inv();
        Selection.checkSteps(only);
        Selection.checkHosts(inv, hosts);
        var conflicts = CidrCheck.check(inv.staticRanges());
        if (!conflicts.isEmpty()) {
            throw new GpuctlException(ExitCode.PREFLIGHT_REFUSED, "the CIDR check failed (nothing was changed):\n  "
                + String.join("\n  ", conflicts.stream().map(CidrCheck.Conflict::message).toList()));
        }
        PrintWriter err = spec.commandLine().getErr();
        SshOptions ssh = options.checkedSsh(opened);
        Set<String> ids = new LinkedHashSet<>(only);
        PhaseRuns.judged(PhaseRuns.session(new BootstrapWorkflow(inv, ids, options.dryRun(), err), inv, ssh, err,
                new Runner.Options(options.dryRun(), concurrency, new LinkedHashSet<>(hosts), commandTimeout.value, waitTimeout)),
            new PhaseRuns.Outcomes(r -> PhaseRuns.whereEachHostStopped(r,
                    "Every step that finished is in place. Run the same command again to resume.\nLogs: " + r.logDir()),
                "preflight refused; nothing was changed on any host:", "bootstrap stopped after a failure:",
                "Fix the cause and run bootstrap again: it resumes where it stopped."));
        spec.commandLine().getOut().println(options.completed("bootstrap complete"));
        return ExitCode.OK.code();
    }
}
