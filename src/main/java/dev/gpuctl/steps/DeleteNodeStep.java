package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;

/** Nodes deleted from the cluster ({@code kubectl delete node}), run on the master: remove-node's step after the drain. */
public final class DeleteNodeStep implements Step {
    private final List<String> nodes;

    public DeleteNodeStep(List<String> nodes) { this.nodes = List.copyOf(nodes); }

    @Override public String id() { return "delete-node"; }
    @Override public String title() { return "delete from the cluster: " + String.join(", ", nodes); }
    @Override public boolean readsCluster() { return true; }
    /** On one master: the first that is not among the nodes (a master being removed is drained from another). */
    @Override public boolean runsOn(HostContext ctx) { return ctx.actingMaster(nodes) && !nodes.isEmpty(); }

    static String names() { return Kube.kubectl("get nodes -o 'jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}'"); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("not in the cluster: " + String.join(", ", nodes), names(), r -> {
            if (!r.ok()) return Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2));
            List<String> still = r.stdout().lines().map(String::strip).filter(nodes::contains).toList();
            return still.isEmpty() ? Optional.empty() : Optional.of("still registered: " + String.join(", ", still));
        }));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return nodes.stream().map(n -> (Op) Op.Run.of("delete node " + n, Kube.kubectl("delete node " + ShellWords.quote(n) + " --ignore-not-found"))).toList();
    }
}
