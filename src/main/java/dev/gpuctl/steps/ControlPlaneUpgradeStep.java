package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import static dev.gpuctl.steps.UpgradeSteps.*;

/** The control plane at the target: kubeadm upgrade plan, then kubeadm upgrade apply with kubeadm's own version. */
final class ControlPlaneUpgradeStep implements Step {
    private final KubeVersion target;

    ControlPlaneUpgradeStep(KubeVersion target) { this.target = target; }

    @Override public String id() { return "control-plane"; }
    @Override public String title() { return "kubeadm upgrade plan, kubeadm upgrade apply " + target; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(manifestAt(target));
    }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(
            Op.Run.of("kubeadm upgrade plan", "kubeadm upgrade plan"),
            Op.Run.of("kubeadm upgrade apply " + target + " --yes", "kubeadm upgrade apply \"$(kubeadm version -o short)\" --yes"));
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        probes.add(ownApiServerAt(ctx.node(), target));
        probes.add(Probe.of("kubeadm-config's kubernetesVersion at " + target,
            Kube.kubectl("-n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}'"),
            r -> {
                var m = Pattern.compile("(?m)^kubernetesVersion:\\s*\"?(v[0-9.]+)").matcher(r.stdout());
                return m.find() && KubeVersion.parse(m.group(1)).filter(target::metBy).isPresent() ? Optional.empty()
                    : Optional.of("kubeadm-config does not say " + target);
            }));
        return probes;
    }
}
