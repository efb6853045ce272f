package dev.gpuctl.steps;

import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A job command's work on the master ({@code gpuctl job ...}): kubectl commands asked there, each whole answer kept by
 * {@link #key} for the workflow to read; nothing is judged here. With {@link #changing}, the step also changes the
 * cluster: the {@code go} rule, read from the kept answers once the last is in, says whether the change is wanted (a
 * job refused by the answers changes nothing, and the workflow says why), and the ops make it; what they print is the
 * command's report, so nothing is proved after them.
 */
public record MasterAnswersStep(String id, String title, List<String> commands, Predicate<Facts> go, String change, List<Op> ops)
    implements Step {
    public MasterAnswersStep {
        commands = List.copyOf(commands);
        ops = List.copyOf(ops);
    }

    /** Only asks. */
    public MasterAnswersStep(String id, String title, List<String> commands) {
        this(id, title, commands, facts -> false, "", List.of());
    }

    /** Asks, then makes {@code change} with {@code ops} when {@code go} says so. */
    public static MasterAnswersStep changing(String id, String title, List<String> commands, Predicate<Facts> go, String change, List<Op> ops) {
        return new MasterAnswersStep(id, title, commands, go, change, ops);
    }

    /** Where a command's whole answer is kept ({@link Facts#kept}). */
    public static String key(String command) { return "master." + command; }

    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new java.util.ArrayList<>();
        for (int i = 0; i < commands.size(); i++) {
            String c = commands.get(i);
            boolean last = i == commands.size() - 1;
            probes.add(new Probe("`" + c + "`", c, (r, facts) -> {
                facts.keep(key(c), r);
                return last && go.test(facts) ? Optional.of(change) : Optional.empty();
            }, r -> java.util.Map.of(), java.time.Duration.ZERO));
        }
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) { return ops; }

    /** The ops' output is the report: nothing to prove after them (and the kept answers stay those before the change). */
    @Override public List<Probe> verify(HostContext ctx) { return ops.isEmpty() ? check(ctx) : List.of(); }
}
