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

/**
 * {@code controlPlaneSchedulable: true} (small labs): the master's {@code node-role.kubernetes.io/control-plane}
 * taint, which kubeadm init puts there, is removed so that pods run on the master too; the NVIDIA device plugin then
 * covers a master with {@code gpu: true} (its DaemonSet tolerates only nvidia.com/gpu). Without the setting this step
 * does nothing: setting it back to false does not put the taint back (kubectl taint nodes MASTER
 * node-role.kubernetes.io/control-plane:NoSchedule does).
 */
public final class SchedulableStep implements Step {
    public static final String TAINT = "node-role.kubernetes.io/control-plane";

    @Override public String id() { return "schedulable"; }
    @Override public String title() { return "control plane schedulable (taint removed)"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) {
        return ctx.node().isMaster() && ctx.cluster().controlPlaneSchedulable();
    }

    /** Why the node's taints still hold the control-plane taint; empty when it is gone. */
    static Optional<String> problem(List<String> taintKeys, String node) {
        return taintKeys.contains(TAINT) ? Optional.of("node " + node + " still has the " + TAINT + " taint: pods do not run there") : Optional.empty();
    }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(untainted(ctx.node().name()));
    }

    /** The master has no control-plane taint: the check, and what skips removing it. */
    static Probe untainted(String node) {
        return ClusterProbes.cluster("no " + TAINT + " taint on " + node + " (controlPlaneSchedulable)",
            view -> view.node(node).map(n -> problem(n.taintKeys(), node)).orElse(Optional.of("node " + node + " not found (kubectl get nodes)")));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String node = ctx.node().name();
        return List.of(Op.Run.of("remove the " + TAINT + " taint from " + node,
                Kube.kubectl("taint nodes " + ShellWords.quote(node) + " " + TAINT + "-"))
            .unlessRight(untainted(node)));
    }
}
