package dev.gpuctl.cli;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.SshOptions;
import dev.gpuctl.workflow.KueueWorkflows;
import dev.gpuctl.workflow.Workflow;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What {@code queue} and {@code usage} share: one read-only Kueue workflow run on the master ({@link MasterSession}), and its report,
 * or an error for people (the master, what could not be read, why, its log).
 */
final class KueueReads {
    private KueueReads() {}

    /** Longest a command on the master may run. */
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    /** The workflow's report; {@code cannot} says what failed ("cannot read Kueue's queues"). */
    static <T> T run(Inventory inv, Path file, SshOptions ssh, CommandSpec spec, Workflow<KueueWorkflows.Outcome<T>> workflow, String cannot) {
        KueueWorkflows.Outcome<T> o = MasterSession.run(inv, file, ssh, spec, on -> new MasterSession.Planned<>(workflow,
            Runner.Options.verify(1, Set.of(on.master().name()), TIMEOUT, Duration.ZERO)), KueueWorkflows.Outcome::result);
        if (o.report().isEmpty()) {
            String why = o.result().report().unreachable().stream().map(h -> h.error()).findFirst().orElse(o.problem());
            throw new GpuctlException(PhaseRuns.noConnection(o.result()) ? ExitCode.UNREACHABLE : ExitCode.STEP_FAILED,
                inv.master().name() + ": " + cannot + ": " + why + "\n  log: " + o.result().logDir().resolve(inv.master().name() + ".log"));
        }
        return o.report().get();
    }
}
