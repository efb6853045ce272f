package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.gpu.GpuQuestions;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.GpuSurveyStep;
import dev.gpuctl.step.Phase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code gpuctl gpus}: {@link GpuSurveyStep}'s questions asked in one read-only session ({@link #options}: VERIFY, no
 * lock, nothing changed) on the master and every GPU node at once, each host's questions in one batch, every host logged
 * like any run; the answers come back by key ({@link GpuQuestions}) for the report to read.
 */
public final class GpusWorkflow implements Workflow<GpusWorkflow.Answers> {
    /** Commands on a host get this long, beside the sampled window. */
    static final Duration TIMEOUT = Duration.ofMinutes(1);

    /** At most this many hosts are asked at once. */
    static final int MAX_AT_ONCE = 64;

    /**
     * What the hosts answered.
     *
     * @param byKey        each question's whole answer, by its {@link GpuQuestions} key; a host not reached answered none
     * @param unreachable  the hosts that could not be reached (or stopped answering), with why
     * @param notConnected those of them to which no connection could be made at all (refused, timed out, not resolved)
     * @param interrupted  the session was stopped (Ctrl-C) before every host answered
     */
    public record Answers(Map<String, ExecResult> byKey, Map<String, String> unreachable, Path logDir, Set<String> notConnected,
                          boolean interrupted) {
        public Answers {
            byKey = Map.copyOf(byKey);
            unreachable = Map.copyOf(unreachable);
            notConnected = Set.copyOf(notConnected);
        }

        public Optional<ExecResult> answer(String key) { return Optional.ofNullable(byKey.get(key)); }
    }

    private final Inventory inv;
    private final Duration window;

    /** {@code window}: how long the GPUs are sampled (ZERO: not at all). */
    public GpusWorkflow(Inventory inv, Duration window) {
        this.inv = inv;
        this.window = window;
    }

    /** The hosts asked: the master (the first: a command with several masters passes the one acting as first) and every GPU node. */
    public static List<Node> hosts(Inventory inv) {
        return inv.nodes().stream().filter(n -> n.name().equals(inv.master().name()) || n.gpu()).toList();
    }

    /**
     * The session: every host asked at once (up to {@link #MAX_AT_ONCE}), so that every node's window is the same and
     * the whole takes about one window.
     */
    public Runner.Options options() {
        Set<String> names = new LinkedHashSet<>(hosts(inv).stream().map(Node::name).toList());
        return Runner.Options.verify(Math.min(MAX_AT_ONCE, names.size()), names, TIMEOUT.plus(window), Duration.ZERO);
    }

    @Override public List<Phase> first() {
        return List.of(new Phase("gpus", "GPUs in use", List.of(new GpuSurveyStep(window)), false));
    }

    @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }

    @Override public Answers outcome(Runner.Result last, Facts learned) {
        List<String> keys = new ArrayList<>(List.of(GpuQuestions.NODES_KEY, GpuQuestions.PODS_KEY));
        for (Node n : hosts(inv)) {
            keys.addAll(List.of(GpuQuestions.smiKey(n.name()), GpuQuestions.checkpointKey(n.name()), GpuQuestions.samplesKey(n.name())));
        }
        Map<String, ExecResult> byKey = new LinkedHashMap<>();
        for (String key : keys) learned.kept(key).ifPresent(r -> byKey.put(key, r));
        Map<String, String> unreachable = new LinkedHashMap<>();
        last.report().unreachable().forEach(h -> unreachable.put(h.name(), h.error()));
        Set<String> notConnected = new LinkedHashSet<>();
        last.failures().stream().filter(StepFailure::unreachable).forEach(f -> notConnected.add(f.host()));
        return new Answers(byKey, unreachable, last.logDir(), notConnected, last.wasInterrupted());
    }
}
