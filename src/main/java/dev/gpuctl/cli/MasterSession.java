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

    /** A workflow and the options it runs under, made for the inventory as the command runs it (its acting master first). */
    record Planned<T>(Workflow<T> workflow, Runner.Options options) {}

    /**
     * The workflow {@code plan} makes for the inventory as run (with several masters the first that answers with its
     * admin.conf acts as the first, {@link Inventories#openCluster}), on that master, as one session; {@code result}: the
     * session's result in its outcome.
     */
    static <T> T run(Inventory inv, Path file, SshOptions ssh, CommandSpec spec, Function<Inventory, Planned<T>> plan,
                     Function<T, Runner.Result> result) {
        Inventories.checkIdentityFiles(file, inv.masters(), ssh);
        Inventories.Acting acting;
        try {
            acting = Inventories.openCluster(inv, ssh, file, spec.commandLine().getErr());
        } catch (RemoteException e) {
            throw GpuctlException.of(e);
        }
        Planned<T> planned = plan.apply(acting.inv());
        T outcome = Workflows.run(planned.workflow(), new Workflows.Target(acting.inv(), n -> acting.master(),
            new PrintWriter(Writer.nullWriter()), planned.options(), null), PhaseRuns.guard(spec.commandLine().getErr()));
        Runner.Result r = result.apply(outcome);
        if (r.wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, "interrupted; run it again.\nLogs: " + r.logDir());
        return outcome;
    }
}
