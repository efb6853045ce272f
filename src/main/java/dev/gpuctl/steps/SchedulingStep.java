package dev.gpuctl.steps;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.gpu.NodeDrain;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;

/**
 * verify's report of nodes left cordoned (by a drain, or by hand): pods are not scheduled there until they are
 * uncordoned. Only verify asks it ({@link Steps#verifyPhases}): bootstrap neither cordons nor uncordons, so a node in
 * maintenance stays in maintenance through a re-run of bootstrap.
 */
public final class SchedulingStep implements Step {
    @Override public String id() { return "scheduling"; }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) {
        return "gpuctl uncordon -i " + inventory + " NODE… once its maintenance is done";
    }
    @Override public String title() { return "no node left cordoned"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        List<String> names = ctx.inventory().nodes().stream().map(Node::name).toList();
        return List.of(ClusterProbes.cluster("no node of the inventory cordoned", view -> {
            List<String> cordoned = view.nodes().stream().filter(ClusterView.NodeState::unschedulable).map(ClusterView.NodeState::name)
                .filter(names::contains).toList();
            return cordoned.isEmpty() ? Optional.empty() : Optional.of(NodeDrain.cordonedProblem(cordoned));
        }));
    }

    /** Nothing to apply: only verify runs this step. */
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
