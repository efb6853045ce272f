package dev.gpuctl.workflow;

import dev.gpuctl.engine.Rounds;
import dev.gpuctl.engine.Runner;

/**
 * A command: its phases, as rounds of one engine session ({@link Rounds}), and the typed data they share, handed back
 * as the command's {@link #outcome} once the session ended. One class per command in this package; a command's
 * options are parsed in cli, its steps live in steps, and only {@link Workflows#run} hands it to the engine.
 *
 * @param <T> what the command reports: the engine's result, or a record of its own holding it (an upgrade's nodes
 *            left, its backup)
 */
public interface Workflow<T> extends Rounds {
    /** What the command reports, from the session's last round ({@link Runner#run(Rounds)}). */
    T outcome(Runner.Result last);
}
