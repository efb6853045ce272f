package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.Runners;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.SshOptions;
import java.io.PrintWriter;
import java.util.function.Supplier;

/**
 * The one way a command runs: a {@link Workflow} as one engine session (one lock, one log directory, one connection
 * per host, one Ctrl-C path, one summary). cli parses options and calls {@link #run}; nothing else makes a runner.
 */
public final class Workflows {
    private Workflows() {}

    /**
     * Where and how a workflow runs.
     *
     * @param lockHolder who takes the cluster's lock on the master before the first change (MasterLock.holder); null:
     *                   the command takes no lock
     */
    public record Target(Inventory inv, SshOptions ssh, PrintWriter progress, Runner.Options options, String lockHolder) {}

    /** Runs the session's body with Ctrl-C asking the runner to stop (cli's signal handling: a second Ctrl-C aborts). */
    public interface Guard {
        <R> R around(Runner runner, Supplier<R> body);
    }

    /** {@code workflow} as one session on {@code target}'s hosts, guarded by {@code guard}: the workflow's outcome. */
    public static <T> T run(Workflow<T> workflow, Target target, Guard guard) {
        Runner runner = Runners.connecting(target.inv(), target.ssh(), target.progress(), target.options(), target.lockHolder());
        Runner.Result last = guard.around(runner, () -> runner.run(workflow));
        return workflow.outcome(last);
    }
}
