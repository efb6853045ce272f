package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.Manifests;
import dev.gpuctl.inventory.Cni;
import dev.gpuctl.inventory.ManifestRef;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Step 7, the pod network: flannel or calico from the inventory's manifest, with the pod CIDR patched in (flannel's
 * net-conf.json "Network"; calico's ipPools cidr), so that the CNI and kubeadm's podSubnet always agree.
 */
public final class CniStep implements Step {
    static final Duration PODS_WAIT = Duration.ofMinutes(3);

    @Override public String id() { return "cni"; }

    @Override public boolean readsCluster() { return true; }
    @Override public String title() { return "pod network (CNI)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }

    static String path(HostContext ctx) {
        return Manifest.remotePath(ctx.cluster().cni().key(), ctx.cluster().cniManifest());
    }

    static String namespace(Cni cni) { return cni == Cni.FLANNEL ? "kube-flannel" : "calico-system"; }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(MasterApi.applied(ctx, ctx.cluster().cni().key() + " manifest", path(ctx)));
    }

    @Override public List<Op> apply(HostContext ctx) {
        Cni cni = ctx.cluster().cni();
        String cidr = ctx.cluster().podCidr().toString();
        List<Op> ops = new ArrayList<>();
        if (cni == Cni.CALICO) {
            Optional.ofNullable(ctx.cluster().cniOperatorManifest()).ifPresent(op -> {
                String p = Manifest.remotePath("tigera-operator", op);
                ops.addAll(Manifest.place("tigera-operator manifest", op, p, "", UnaryOperator.identity()));
                // The operator's CRDs are too large for client-side apply's annotation: create once, as Calico documents.
                ops.add(Op.Run.of("create the Tigera operator", Kube.kubectl("create -f " + p))
                    .unless(Kube.kubectl("get -f " + p) + " >/dev/null 2>&1"));
            });
        }
        UnaryOperator<String> patch = cni == Cni.FLANNEL
            ? text -> Manifests.patchFlannelNetwork(text, cidr)
            : text -> Manifests.patchCalicoCidr(text, cidr);
        String rule = cni == Cni.FLANNEL ? "net-conf.json Network set to " + cidr : "ipPools cidr set to " + cidr;
        ops.addAll(Manifest.place(cni.key() + " manifest", ctx.cluster().cniManifest(), path(ctx), rule, patch));
        ops.add(Manifest.apply(cni.key() + " manifest", path(ctx)));
        return ops;
    }

    @Override public List<Probe> verify(HostContext ctx) {
        List<Probe> probes = new ArrayList<>(check(ctx));
        String ns = namespace(ctx.cluster().cni());
        probes.add(ClusterProbes.podsRunning(ns + " pods running", ns).waitingUpTo(PODS_WAIT));
        probes.add(ClusterProbes.nodesReady(ctx.inventory().nodes().stream().map(n -> n.name()).toList()).waitingUpTo(PODS_WAIT));
        return probes;
    }
}
