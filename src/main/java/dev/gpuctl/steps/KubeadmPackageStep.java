package dev.gpuctl.steps;

import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static dev.gpuctl.steps.UpgradeSteps.*;

/** kubeadm at the target on the master or on a batch's workers: the package source and pin moved, installed, held. */
final class KubeadmPackageStep implements Step {
    private final KubeVersion target;
    private final Set<String> hosts;

    KubeadmPackageStep(KubeVersion target, Set<String> hosts) { this.target = target; this.hosts = hosts; }

    @Override public String id() { return "kubeadm"; }
    @Override public String title() { return "kubeadm " + target + " (package source and pin moved, held)"; }
    @Override public boolean runsOn(HostContext ctx) { return hosts.contains(ctx.node().name()); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("kubeadm at " + target + " (kubeadm version -o short)", "kubeadm version -o short",
            r -> KubeVersion.parse(r.stdout().strip()).filter(target::metBy).isPresent() ? Optional.empty()
                : Optional.of("kubeadm is " + r.stdout().strip() + ", the upgrade needs " + target)));
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>(source(ctx, target));
        ops.add(Op.Run.of("install kubeadm " + target, install(List.of("kubeadm"), target)));
        ops.add(hold());
        return ops;
    }
}
