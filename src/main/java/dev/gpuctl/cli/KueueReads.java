package dev.gpuctl.cli;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.KueueWorkflows;
import dev.gpuctl.workflow.Workflow;
import dev.gpuctl.workflow.Workflows;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What {@code queue} and {@code usage} share: the master opened, one read-only Kueue workflow run on it, and its report,
 * or an error for people (the master, what could not be read, why, its log).
 */
final class KueueReads {
    private KueueReads() {}

    /** Longest a command on the master may run. */
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    /** The workflow's report; {@code cannot} says what failed ("cannot read Kueue's queues"). */
    static <T> T run(Inventory inv, Path file, SshOptions ssh, CommandSpec spec, Workflow<KueueWorkflows.Outcome<T>> workflow, String cannot) {
        Inventories.checkIdentityFiles(file, inv.masters(), ssh);
        Remote master;
        try {
            Inventories.Acting acting = Inventories.openCluster(inv, ssh, file, spec.commandLine().getErr());
            inv = acting.inv();
            master = acting.master();
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        Workflows.Target on = new Workflows.Target(inv, n -> master, new PrintWriter(Writer.nullWriter()),
            Runner.Options.verify(1, Set.of(inv.master().name()), TIMEOUT, Duration.ZERO), null);
        KueueWorkflows.Outcome<T> o = Workflows.run(workflow, on, PhaseRuns.guard(spec.commandLine().getErr()));
        if (o.result().wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + o.result().logDir());
        if (o.report().isEmpty()) {
            String why = o.result().report().unreachable().stream().map(h -> h.error()).findFirst().orElse(o.problem());
            throw new GpuctlException(PhaseRuns.noConnection(o.result()) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                inv.master().name() + ": " + cannot + ": " + why + "\n  log: " + o.result().logDir().resolve(inv.master().name() + ".log"));
        }
        return o.report().get();
    }
}
