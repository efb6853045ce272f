package dev.gpuctl.cli;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.Workflow;
import dev.gpuctl.workflow.Workflows;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What the commands that work through the master alone share (kubeconfig, queue, usage, job): the master opened (its cluster
 * checked, {@link Inventories#openCluster}), the workflow run on it as one session with the common Ctrl-C path, and an
 * interrupted session said so (exit 4); the workflow's outcome is the command's to read.
 */
final class MasterSession {
    private MasterSession() {}

    /** {@code workflow} on the master under {@code options}; {@code result}: the session's result in its outcome. */
    static <T> T run(Inventory inv, Path file, SshOptions ssh, CommandSpec spec, Workflow<T> workflow, Runner.Options options,
                     Function<T, Runner.Result> result) {
        Inventories.checkIdentityFiles(file, List.of(inv.master()), ssh);
        Remote master;
        try {
            master = Inventories.openCluster(inv, ssh, file);
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        T outcome = Workflows.run(workflow, new Workflows.Target(inv, n -> master, new PrintWriter(Writer.nullWriter()), options, null),
            PhaseRuns.guard(spec.commandLine().getErr()));
        Runner.Result r = result.apply(outcome);
        if (r.wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + r.logDir());
        return outcome;
    }
}
