package dev.gpuctl.steps;

import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;

import static dev.gpuctl.steps.UpgradeSteps.*;

/** Another master's control plane instance at the target: {@code kubeadm upgrade node} on it. */
final class ControlPlaneNodeUpgradeStep implements Step {
    private final KubeVersion target;
    private final Node master;

    ControlPlaneNodeUpgradeStep(KubeVersion target, Node master) { this.target = target; this.master = master; }

    @Override public String id() { return "control-plane-node"; }
    @Override public String title() { return "kubeadm upgrade node (control plane instance to " + target + ")"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(master.name()); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(manifestAt(target));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(Op.Run.of("kubeadm upgrade node", "kubeadm upgrade node"));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        return List.of(manifestAt(target), ownApiServerAt(master, target));
    }
}
