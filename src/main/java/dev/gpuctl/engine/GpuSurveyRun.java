package dev.gpuctl.engine;

import dev.gpuctl.hostconf.GpuQuestions;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.steps.GpuSurveyStep;
import dev.gpuctl.steps.Phase;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code gpuctl gpus} on the engine: {@link GpuSurveyStep}'s questions asked in a read-only run (VERIFY mode: no lock,
 * nothing changed) on the master and every GPU node at once, each host's questions in one batch, every host logged
 * like any run; the answers come back by key ({@link GpuQuestions}) for the report to read.
 */
public final class GpuSurveyRun {
    private GpuSurveyRun() {}

    /** Commands on a host get this long, beside the sampled window. */
    static final Duration TIMEOUT = Duration.ofMinutes(1);

    /**
     * What the hosts answered.
     *
     * @param byKey       each question's whole answer, by its {@link GpuQuestions} key; a host not reached answered none
     * @param unreachable the hosts that could not be reached (or stopped answering), with why
     * @param notConnected those of them to which no connection could be made at all (refused, timed out, not resolved)
     */
    public record Answers(Map<String, ExecResult> byKey, Map<String, String> unreachable, Path logDir, Set<String> notConnected) {
        public Answers {
            byKey = Map.copyOf(byKey);
            unreachable = Map.copyOf(unreachable);
            notConnected = Set.copyOf(notConnected);
        }

        public Answers(Map<String, ExecResult> byKey, Map<String, String> unreachable, Path logDir) {
            this(byKey, unreachable, logDir, Set.of());
        }

        public Optional<ExecResult> answer(String key) { return Optional.ofNullable(byKey.get(key)); }
    }

    /** At most this many hosts are asked at once. */
    static final int MAX_AT_ONCE = 64;

    /**
     * Asks the master and every GPU node, all at once (up to {@link #MAX_AT_ONCE}), so that every node's window is
     * the same and the whole takes about one window; {@code window}: how long the GPUs are sampled (ZERO: not at all).
     */
    public static Answers ask(Inventory inv, Function<Node, Remote> connector, Duration window) {
        // the cluster is asked on one master (the first: a command with several masters passes the one acting as first)
        List<Node> hosts = inv.nodes().stream().filter(n -> n.name().equals(inv.master().name()) || n.gpu()).toList();
        Set<String> names = new LinkedHashSet<>(hosts.stream().map(Node::name).toList());
        Runner runner = new Runner(inv, connector, new PrintWriter(OutputStream.nullOutputStream()),
            Runner.Options.verify(Math.min(MAX_AT_ONCE, names.size()), names, TIMEOUT.plus(window), Duration.ZERO));
        Runner.Result result = runner.run(List.of(new Phase("gpus", "GPUs in use", List.of(new GpuSurveyStep(window)), false)));
        List<String> keys = new ArrayList<>(List.of(GpuQuestions.NODES_KEY, GpuQuestions.PODS_KEY));
        for (Node n : hosts) {
            keys.addAll(List.of(GpuQuestions.smiKey(n.name()), GpuQuestions.checkpointKey(n.name()), GpuQuestions.samplesKey(n.name())));
        }
        Map<String, ExecResult> byKey = new LinkedHashMap<>();
        for (String key : keys) runner.answer(key).ifPresent(r -> byKey.put(key, r));
        Map<String, String> unreachable = new LinkedHashMap<>();
        result.report().unreachable().forEach(h -> unreachable.put(h.name(), h.error()));
        Set<String> notConnected = new LinkedHashSet<>();
        result.failures().stream().filter(StepFailure::unreachable).forEach(f -> notConnected.add(f.host()));
        return new Answers(byKey, unreachable, result.logDir(), notConnected);
    }
}
