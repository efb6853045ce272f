package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.gpu.NodeDrain;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The rest of a drain: {@code kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout=D} on each node
 * (evictions, so PodDisruptionBudgets are respected and retried until D); with force also {@code --force}, which
 * deletes bare pods too. Right when no pod but DaemonSet pods and static pods' mirrors still runs there.
 */
public final class EvictStep implements Step {
    /** How long pods that are already going are waited for after kubectl drain returned. */
    static final Duration GONE_WAIT = Duration.ofMinutes(1);

    private final List<String> nodes;
    private final Duration timeout;
    private final boolean force;

    public EvictStep(List<String> nodes, Duration timeout, boolean force) {
        this.nodes = List.copyOf(nodes);
        this.timeout = timeout;
        this.force = force;
    }

    @Override public String id() { return "drain"; }
    @Override public String title() { return "drain " + String.join(", ", nodes) + (force ? " (forced: GPU jobs evicted too)" : ""); }
    @Override public boolean readsCluster() { return true; }
    /** On one master: the first that is not among the nodes (a master being removed is drained from another). */
    @Override public boolean runsOn(HostContext ctx) { return ctx.actingMaster(nodes) && !nodes.isEmpty(); }

    static Optional<String> problem(String podsAnswer, List<String> nodes) {
        var pending = NodeDrain.toEvictOn(NodeDrain.pods(NodeDrain.PODS.list(podsAnswer)), nodes);
        if (pending.isEmpty()) return Optional.empty();
        return Optional.of(String.join("; ", pending.entrySet().stream().map(e -> NodeDrain.pending(e.getKey(), e.getValue())).toList()));
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("only DaemonSet and static pods left on " + String.join(", ", nodes), GpuJobsStep.PODS, r -> {
            if (!r.ok()) return Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2));
            return problem(r.stdout(), nodes);
        }).waitingUpTo(GONE_WAIT));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return nodes.stream().map(n -> (Op) Op.Run.of("drain " + n, Kube.kubectl(NodeDrain.kubectlDrainArgs(n, timeout, force)))).toList();
    }
}
