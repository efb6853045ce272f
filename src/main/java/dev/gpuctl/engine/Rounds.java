package dev.gpuctl.engine;

import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import java.util.List;
import java.util.Optional;

/**
 * A command's work as rounds of ONE engine session ({@link Runner#run(Rounds)}): the engine runs a round's phases,
 * then asks for the next round with that round's result. A command whose next phases depend on what the last ones
 * found (an upgrade's batches: a batch whose drain finds GPU jobs still running is uncordoned and left, and the next
 * batch goes on) stays one run: one lock held from the first change to the end, one log directory, one connection per
 * host, one stop request (Ctrl-C), one summary.
 */
public interface Rounds {
    /** The first round's phases. */
    List<Phase> first();

    /**
     * The next round's phases after {@code done}, a round that was neither refused by preflight nor interrupted (it may
     * have failed: the workflow decides whether that ends the command); empty: the session ends, {@code done}'s
     * failures its own.
     */
    Optional<List<Phase>> next(Runner.Result done);

    /**
     * Handed the session's facts as it starts: a command whose next round is planned from what the last round's probes
     * kept ({@link Facts#kept}: a repair's diagnosis) reads them there in {@link #next}.
     */
    default void learning(Facts learned) {}

    /** One round: these phases, in order. */
    static Rounds of(List<Phase> phases) {
        return new Rounds() {
            @Override public List<Phase> first() { return phases; }
            @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }
        };
    }
}
