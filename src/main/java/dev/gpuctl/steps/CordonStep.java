package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;

/**
 * Nodes marked unschedulable ({@code kubectl cordon}), or schedulable again ({@code kubectl uncordon}): run on the
 * master, for the nodes it was made for. A drain's first step, an uncordon's only one.
 */
public final class CordonStep implements Step {
    private final List<String> nodes;
    private final boolean cordoned;
    private final boolean missingOk;

    /** @param cordoned true: the nodes end unschedulable (cordon); false: schedulable (uncordon) */
    public CordonStep(List<String> nodes, boolean cordoned) {
        this(nodes, cordoned, false);
    }

    /** @param missingOk a node the cluster does not have (any more) is right as it is (remove-node's re-run) */
    public CordonStep(List<String> nodes, boolean cordoned, boolean missingOk) {
        this.nodes = List.copyOf(nodes);
        this.cordoned = cordoned;
        this.missingOk = missingOk;
    }

    @Override public String id() { return cordoned ? "cordon" : "uncordon"; }
    @Override public String title() {
        return (cordoned ? "cordon (no new pods): " : "uncordon (schedulable again): ") + String.join(", ", nodes);
    }
    @Override public boolean readsCluster() { return true; }
    /** On one master: the first that is not among the nodes (a master being removed is drained from another). */
    @Override public boolean runsOn(HostContext ctx) { return ctx.actingMaster(nodes) && !nodes.isEmpty(); }

    /** spec.unschedulable of a node: "true" when cordoned, empty when not. */
    static String unschedulable(String node) {
        return Kube.kubectl("get node " + ShellWords.quote(node) + " -o 'jsonpath={.spec.unschedulable}'");
    }

    /** What is wrong with a node's answer to {@link #unschedulable}, for a node that should be {@code cordoned} or not. */
    static Optional<String> problem(ExecResult r, String node, boolean cordoned, boolean missingOk) {
        if (!r.ok() && missingOk && r.stderr().contains("(NotFound)")) return Optional.empty();
        if (!r.ok()) return Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2));
        boolean is = r.stdout().strip().equals("true");
        if (is == cordoned) return Optional.empty();
        return Optional.of(node + (cordoned ? " is schedulable" : " is cordoned (SchedulingDisabled)"));
    }

    @Override public List<Probe> check(HostContext ctx) {
        return nodes.stream().map(n -> Probe.of("node " + n + (cordoned ? " cordoned" : " schedulable"), unschedulable(n),
            r -> problem(r, n, cordoned, missingOk))).toList();
    }

    @Override public List<Op> apply(HostContext ctx) {
        String test = cordoned ? "= true" : "!= true";
        return nodes.stream().map(n -> (Op) Op.Run.of((cordoned ? "cordon " : "uncordon ") + n,
                Kube.kubectl((cordoned ? "cordon " : "uncordon ") + ShellWords.quote(n)))
            .unless((missingOk ? "! " + Kube.kubectl("get node " + ShellWords.quote(n) + " -o name") + " >/dev/null 2>&1 || " : "")
                + "test \"$(" + unschedulable(n) + ")\" " + test)).toList();
    }
}
