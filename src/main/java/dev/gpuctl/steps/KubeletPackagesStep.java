package dev.gpuctl.steps;

import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.gpu.NvidiaSmi;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static dev.gpuctl.steps.UpgradeSteps.*;

/**
 * kubelet and kubectl at the target on a node (on a worker, first {@code kubeadm upgrade node}: its kubelet
 * configuration from the cluster's), held, kubelet restarted.
 */
final class KubeletPackagesStep implements Step {
    private final KubeVersion target;
    private final Set<String> hosts;

    KubeletPackagesStep(KubeVersion target, Set<String> hosts) { this.target = target; this.hosts = hosts; }

    @Override public String id() { return "kubelet"; }
    @Override public String title() { return "kubelet and kubectl " + target + ", kubelet restarted"; }
    @Override public boolean runsOn(HostContext ctx) { return hosts.contains(ctx.node().name()); }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        if (ctx.gpu()) {
            // what NodeBack waits for: the node's allocatable nvidia.com/gpu equal to this count again
            probes.add(Probe.of("nvidia-smi answers (its GPU count is what the node must offer again)",
                    "nvidia-smi --query-gpu=" + NvidiaSmi.QUERY_FIELDS + " --format=csv,noheader,nounits 2>&1",
                    r -> r.ok() ? Optional.empty() : Optional.of("nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2)))
                .learning(r -> PreflightStep.gpuFacts(ctx, r)));
        }
        probes.addAll(List.of(
            Probe.succeeds("kubelet at " + target + " (kubelet --version)", kubeletAt(target)),
            Probe.succeeds("kubectl at " + target + " (kubectl version --client)",
                "kubectl version --client 2>/dev/null | awk '/^Client Version/ {print $3}' | grep -qE '" + versionRegex(target) + "'"),
            Probe.equals("kubelet running", "systemctl is-active kubelet 2>&1 || true", "active")));
        return probes;
    }

    @Override public List<Op> apply(HostContext ctx) {
        List<Op> ops = new ArrayList<>();
        if (!ctx.node().isMaster()) {
            ops.add(Op.Run.of("kubeadm upgrade node", "kubeadm upgrade node").unless(kubeletAt(target)));
        } else {
            ops.addAll(source(ctx, target));
        }
        ops.add(Op.Run.of("install kubelet, kubectl " + target, install(List.of("kubelet", "kubectl"), target)));
        ops.add(hold());
        ops.add(Op.Run.of("restart kubelet", "systemctl daemon-reload && systemctl restart kubelet"));
        return ops;
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx).stream().filter(p -> !p.what().equals("kubelet running")).toList());
        probes.add(Probe.equals("kubelet running", "systemctl is-active kubelet 2>&1 || true", "active").waitingUpTo(Duration.ofMinutes(1)));
        return probes;
    }
}
