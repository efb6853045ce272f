package dev.gpuctl.steps;

import dev.gpuctl.gpu.NodeDrain;
import dev.gpuctl.step.FailureKind;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A drain's wait for the GPU work that runs to completion on the nodes (a Job's pods, bare pods: {@link
 * NodeDrain#guarded}): it is never evicted here. Run on the master after the nodes are cordoned: the check asks once;
 * the verify asks again every 2 s up to the drain timeout, and fails naming what still runs (so the drain stops
 * before {@code kubectl drain}, which would evict it). Not part of a forced drain.
 */
public final class GpuJobsStep implements Step {
    private final List<String> nodes;
    private final Duration timeout;

    public GpuJobsStep(List<String> nodes, Duration timeout) {
        this.nodes = List.copyOf(nodes);
        this.timeout = timeout;
    }

    @Override public String id() { return "gpu-jobs"; }
    @Override public String title() { return "wait for the GPU jobs on " + String.join(", ", nodes) + " (up to " + timeout + ")"; }
    @Override public boolean readsCluster() { return true; }
    /** On one master: the first that is not among the nodes (a master being removed is drained from another). */
    @Override public boolean runsOn(HostContext ctx) { return ctx.actingMaster(nodes) && !nodes.isEmpty(); }

    /** Every pod in the cluster, the fields the drain reads: one question for all the nodes. */
    static final String PODS = ClusterProbes.pods("-A");

    /** Empty when no guarded pod runs on the nodes, else {@link NodeDrain#left} for each node that has one. */
    static Optional<String> problem(String podsAnswer, List<String> nodes) {
        var left = NodeDrain.guardedOn(NodeDrain.pods(NodeDrain.PODS.list(podsAnswer)), nodes);
        return left.isEmpty() ? Optional.empty() : Optional.of(NodeDrain.left(left));
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("no GPU job still running on " + String.join(", ", nodes), PODS, r -> {
            if (!r.ok()) return Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2));
            return problem(r.stdout(), nodes);
        }).waitingUpTo(timeout));
    }

    /** A GPU job that still runs makes the nodes busy, not broken. */
    @Override public FailureKind failureKind() { return FailureKind.GPU_JOBS_RUNNING; }

    /** Nothing to do but wait: the verify does. */
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    @Override public String whileWaiting(String problem, Duration upTo) {
        return "waiting up to " + NodeDrain.goDuration(upTo) + " for: " + NodeDrain.withoutAdvice(problem);
    }
}
