package dev.gpuctl.workflow;

import dev.gpuctl.engine.Rounds;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import java.util.List;
import java.util.Optional;

/**
 * A command: its phases, as rounds of one engine session ({@link Rounds}), and the typed data they share, handed back
 * as the command's {@link #outcome} once the session ended. One class per command in this package; a command's
 * options are parsed in cli, its steps live in steps, and only {@link Workflows#run} hands it to the engine.
 *
 * @param <T> what the command reports: the engine's result, or a record of its own holding it (an upgrade's nodes
 *            left, its backup)
 */
public interface Workflow<T> extends Rounds {
    /**
     * What the command reports, from the session's last round ({@link Runner#run(Rounds)}) and what its probes learned
     * ({@code learned}: the join command's parts, the cluster's CA).
     */
    T outcome(Runner.Result last, Facts learned);

    /** A command whose phases are known before it starts: one round; it reports the engine's result. */
    static Workflow<Runner.Result> of(List<Phase> phases) {
        return new Workflow<>() {
            @Override public List<Phase> first() { return phases; }
            @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }
            @Override public Runner.Result outcome(Runner.Result last, Facts learned) { return last; }
        };
    }
}
