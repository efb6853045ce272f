package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.Runners;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.Remotes;
import dev.gpuctl.remote.SshOptions;
import java.io.PrintWriter;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one way a command runs: a {@link Workflow} as one engine session (one lock, one log directory, one connection
 * per host, one Ctrl-C path, one summary). cli parses options and calls {@link #run}; only the engine makes runners.
 */
public final class Workflows {
    private Workflows() {}

    /**
     * Where and how a workflow runs.
     *
     * @param connector  how a host is reached (ssh: {@link #over})
     * @param lockHolder who takes the cluster's lock on the master before the first change (MasterLock.holder); null:
     *                   the command takes no lock (read-only commands)
     */
    public record Target(Inventory inv, Function<Node, Remote> connector, PrintWriter progress, Runner.Options options, String lockHolder) {}

    /** The inventory's hosts over ssh. */
    public static Target over(Inventory inv, SshOptions ssh, PrintWriter progress, Runner.Options options, String lockHolder) {
        return new Target(inv, node -> Remotes.open(node, ssh), progress, options, lockHolder);
    }

    /** Runs the session's body with Ctrl-C asking the runner to stop (cli's signal handling: a second Ctrl-C aborts). */
    public interface Guard {
        <R> R around(Runner runner, Supplier<R> body);

        /** No signal handling (a test, a simulation). */
        Guard NONE = new Guard() {
            @Override public <R> R around(Runner runner, Supplier<R> body) { return body.get(); }
        };
    }

    /** {@code workflow} as one session on {@code target}'s hosts, guarded by {@code guard}: the workflow's outcome. */
    public static <T> T run(Workflow<T> workflow, Target target, Guard guard) {
        Runner runner = Runners.make(target.inv(), target.connector(), target.progress(), target.options(), target.lockHolder());
        Runner.Result last = guard.around(runner, () -> runner.run(workflow));
        return workflow.outcome(last, runner.learned());
    }
}
