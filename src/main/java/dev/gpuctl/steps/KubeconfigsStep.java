package dev.gpuctl.steps;

import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;

/**
 * The copies of the master's admin.conf refreshed after kubeadm renewed its client certificate ({@code kubeadm upgrade
 * apply}, {@code kubeadm certs renew all}): the ssh user's ~/.kube/config on the master, this machine's
 * .gpuctl/CLUSTER/admin.conf (rebuilt, never copied; a CA other than the recorded one is refused) and a kubeconfig that
 * {@code gpuctl kubeconfig --merge} wrote before (its entries for this cluster). The same probes and ops as the
 * control-plane step's, written once there.
 */
public final class KubeconfigsStep implements Step {
    @Override public String id() { return "kubeconfigs"; }
    @Override public String title() { return "admin.conf's copies refreshed (the ssh user's ~/.kube/config, this machine's, a merged kubeconfig)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }

    /** The master's and this machine's copies hold the master's admin.conf credentials. */
    @Override public List<Probe> check(HostContext ctx) {
        return ControlPlaneStep.kubeconfigProbes(ctx);
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(ControlPlaneStep.userKubeconfigOp(ctx), ControlPlaneStep.fetchKubeconfigOp(ctx));
    }
}
