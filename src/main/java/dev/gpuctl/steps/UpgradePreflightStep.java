package dev.gpuctl.steps;

import dev.gpuctl.kube.ApiServerImage;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.gpu.NvidiaSmi;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.gpuctl.steps.UpgradeSteps.*;

/** Every host: root, its kubelet's version, its GPUs; the master: every node's version and state, the skew rules. */
final class UpgradePreflightStep implements Step {
    private final KubeVersion target;

    UpgradePreflightStep(KubeVersion target) { this.target = target; }

    @Override public String id() { return "preflight"; }
    @Override public String title() { return "upgrade preflight (read-only)"; }
    @Override public boolean runsOn(HostContext ctx) { return true; }
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    @Override public List<Probe> check(HostContext ctx) {
        List<Probe> probes = new ArrayList<>();
        probes.add(Probe.equals("commands run as root", "id -u", "0"));
        probes.add(Probe.of("a joined node: kubelet installed and configured", "kubelet --version && test -s /etc/kubernetes/kubelet.conf",
            r -> r.ok() ? Optional.empty() : Optional.of("no kubelet or no /etc/kubernetes/kubelet.conf: this host is not a node of a"
                + " cluster; bootstrap it first (gpuctl bootstrap)")));
        if (ctx.gpu()) {
            probes.add(Probe.of("nvidia-smi answers (its GPU count is what the node must offer again)",
                    "nvidia-smi --query-gpu=" + NvidiaSmi.QUERY_FIELDS + " --format=csv,noheader,nounits 2>&1",
                    r -> r.ok() ? Optional.empty() : Optional.of("nvidia-smi failed (exit " + r.exit() + "): " + r.tail(2)))
                .learning(r -> PreflightStep.gpuFacts(ctx, r)));
        }
        if (ctx.node().isMaster()) probes.addAll(cluster(ctx));
        return probes;
    }

    /** kube-apiserver's image in its static-pod manifest, learned by the first of the master's probes. */
    static String apiServerFact(Node master) { return "upgrade." + master.name() + ".apiServerImage"; }

    static Facts.Key<ApiServerImage> apiServer(Node master) {
        return new Facts.Key<>(apiServerFact(master), ApiServerImage.class, ApiServerImage::parse);
    }

    /** The master's questions: the control plane's version (its manifest), then every node's version and state. */
    private List<Probe> cluster(HostContext ctx) {
        Inventory inv = ctx.inventory();
        Node master = ctx.node();
        String image = "f=" + PreflightStep.APISERVER_MANIFEST + "; test -s $f || { echo 'no '$f >&2; exit 3; };"
            + " sed -n 's/^[[:space:]]*image:[[:space:]]*//p' $f";
        return List.of(
            Probe.of("a control plane here: kube-apiserver's image (" + PreflightStep.APISERVER_MANIFEST + ")", image,
                    r -> r.ok() ? Optional.empty() : Optional.of(r.exit() == 3 ? "no control plane here (" + PreflightStep.APISERVER_MANIFEST
                        + " is missing): bootstrap the cluster first" : "cannot read " + PreflightStep.APISERVER_MANIFEST + ": " + r.tail(2)))
                .learning(r -> r.ok() ? Map.of(apiServerFact(master), r.stdout()) : Map.of()),
            Probe.of("the cluster's versions allow " + target + " (one minor at a time, no downgrade, kubelets never ahead) and"
                    + " every node is Ready", Kube.kubectl("get nodes " + NODES.outputFlag()), r -> Optional.empty())
                .judgedWithFacts((r, facts) -> {
                    if (!r.ok()) return Optional.of("kubectl failed: " + r.tail(2));
                    return judge(inv, target, facts.get(apiServer(master)).flatMap(ApiServerImage::version), nodeStates(r.stdout()));
                }));
    }
}
