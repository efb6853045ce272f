package dev.gpuctl.cli;

import dev.gpuctl.workflow.Workflow;
import dev.gpuctl.engine.MasterLock;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.remote.Remotes;
import java.util.concurrent.atomic.AtomicBoolean;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.Workflows;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A day-2 command's workflow on the one engine ({@link Workflows#run}): connect with the usual ssh options, take the cluster's lock, stop
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

    /** What a dry run that stopped says to do next. */
    static final String DRY_RUN_NEXT = "A real run would stop here too. Fix the cause, then run the dry run again to see what the command would do.";

    static Runner.Result run(Inventory inv, Path file, Workflow<Runner.Result> workflow, boolean dryRun, SshOptions ssh, Duration commandTimeout,
                             PrintWriter err, String command, String next) {
        Inventories.checkIdentityFiles(file, inv.nodes(), ssh);
        Runner.Result result = session(workflow, inv, ssh, err, new Runner.Options(dryRun, 16, Set.of(), commandTimeout));
        if (dryRun) return judged(result, dryRunOutcomes(command));
        return judged(result, new Outcomes(r -> whereEachHostStopped(r, "Run the same command again to resume.\nLogs: " + r.logDir()),
            command + " refused; nothing was changed:", command + " stopped:", next));
    }

    /**
     * {@link #run} for a command that needs one healthy master's kubectl (drain, uncordon): with several masters the
     * session runs on {@link #acting}'s inventory, so that it works while another master is down.
     */
    static Runner.Result runActing(Inventory inv, Path file, Workflow<Runner.Result> workflow, boolean dryRun, SshOptions ssh,
                                   Duration commandTimeout, PrintWriter err, String command, String next) {
        Inventories.checkIdentityFiles(file, inv.nodes(), ssh);
        Over over = acting(inv, file, ssh, err);
        Runner.Result result = Workflows.run(workflow, new Workflows.Target(over.inv(), over.connector(), err,
            new Runner.Options(dryRun, 16, Set.of(), commandTimeout), lockHolder()), guard(err));
        if (dryRun) return judged(result, dryRunOutcomes(command));
        return judged(result, new Outcomes(r -> whereEachHostStopped(r, "Run the same command again to resume.\nLogs: " + r.logDir()),
            command + " refused; nothing was changed:", command + " stopped:", next));
    }

    /** The inventory a session runs on and how it connects to each host. */
    record Over(Inventory inv, Function<Node, Remote> connector) {}

    /**
     * Where a command that needs one healthy master's kubectl runs: one master, its inventory as it is; several, the
     * first that answers with its admin.conf ({@link Inventories#openCluster}) as the first master of the session's
     * inventory ({@link Inventory#actingFirst}), its connection handed to the session (a later one, after a reboot, made
     * anew). Its kubectl work and the cluster's lock are then that master's.
     */
    static Over acting(Inventory inv, Path file, SshOptions ssh, PrintWriter err) {
        if (!inv.highlyAvailable()) return new Over(inv, n -> Remotes.open(n, ssh));
        Inventories.Acting a = Inventories.openCluster(inv, ssh, file, err);
        String name = a.inv().master().name();
        AtomicBoolean handed = new AtomicBoolean();
        return new Over(a.inv(), n -> n.name().equals(name) && !handed.getAndSet(true) ? a.master() : Remotes.open(n, ssh));
    }

    /**
     * {@code workflow} as one engine session over ssh, holding the cluster's lock on the master from its first change to
     * its end, in this user's, machine's and process's name; Ctrl-C stops it cleanly.
     */
    static <T> T session(Workflow<T> workflow, Inventory inv, SshOptions ssh, PrintWriter err, Runner.Options options) {
        return Workflows.run(workflow, Workflows.over(inv, ssh, err, options, lockHolder()), guard(err));
    }

    /** What a dry run that did not complete says: it changed nothing and advises nothing it did not try. */
    static Outcomes dryRunOutcomes(String command) {
        return new Outcomes(r -> whereEachHostStopped(r, "Nothing was changed (dry run).\nLogs: " + r.logDir()),
            command + " --dry-run refused; nothing was changed:", command + " --dry-run stopped; nothing was changed:", DRY_RUN_NEXT);
    }

    static String lockHolder() {
        return MasterLock.holder(System.getProperty("user.name"), BootstrapCommand.localHostName(), ProcessHandle.current().pid(),
            Instant.now());
    }

    static Interrupts.Stoppable stoppable(Runner runner) {
        return new Interrupts.Stoppable() {
            @Override public void requestStop() { runner.requestStop(); }
            @Override public void abort() { runner.abort(); }
        };
    }

    /** Ctrl-C asking a workflow's runner to stop, as {@link #interruptible} does. */
    static Workflows.Guard guard(PrintWriter err) {
        return new Workflows.Guard() {
            @Override public <R> R around(Runner runner, Supplier<R> body) {
                return interruptible(stoppable(runner), err, body);
            }
        };
    }

    /** {@code body}, with Ctrl-C asking {@code target} to stop (a second Ctrl-C, or the grace time, aborts it). */
    static <T> T interruptible(Interrupts.Stoppable target, PrintWriter err, Supplier<T> body) {
        try (Interrupts ignored = Interrupts.during(target, Duration.ofSeconds(BootstrapCommand.INTERRUPT_GRACE_SECONDS), err)) {
            return body.get();
        }
    }

    /**
     * What a command says when its run ends otherwise than done: the message for an interrupted run, the headline of a
     * refused preflight (its problems and the logs follow), and the headline of failed steps (each failure described,
     * then {@code next}).
     */
    record Outcomes(Function<Runner.Result, String> interrupted, String refused, String failed, String next) {}

    /** The result when the run completed; else the exit code and message {@code says} gives (exit 130, 3 or 1). */
    static Runner.Result judged(Runner.Result result, Outcomes says) {
        if (result.wasInterrupted()) throw new GpuctlException(ExitCode.INTERRUPTED, says.interrupted().apply(result));
        if (result.preflightRefused()) {
            throw new GpuctlException(noConnection(result) ? ExitCode.UNREACHABLE : ExitCode.PREFLIGHT_REFUSED, says.refused() + "\n"
                + String.join("\n", result.preflightProblems()) + "\nLogs: " + result.logDir());
        }
        if (!result.failures().isEmpty()) {
            StringBuilder sb = new StringBuilder(says.failed() + "\n");
            for (StepFailure f : result.failures()) sb.append(f.describe());
            sb.append(says.next());
            throw new GpuctlException(noConnection(result) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED, sb.toString());
        }
        return result;
    }

    /** A host of the run could not be connected to at all: exit 6, whatever else failed. */
    static boolean noConnection(Runner.Result result) {
        return result.failures().stream().anyMatch(StepFailure::unreachable);
    }

    /** "interrupted; where each host stopped:", each host's line, the failures, then {@code resume}. */
    static String whereEachHostStopped(Runner.Result result, String resume) {
        StringBuilder sb = new StringBuilder("interrupted; where each host stopped:\n");
        result.interrupted().forEach(w -> sb.append("  ").append(w).append('\n'));
        for (StepFailure f : result.failures()) sb.append(f.describe());
        return sb.append(resume).toString();
    }
}
