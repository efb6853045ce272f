package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.KubeVersion;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the upgrade's steps read from kubectl, and when a node counts as back. */
class UpgradeStepsTest {
    static final String NODES = "m\t\tv1.35.1\t[{\"type\":\"Ready\",\"status\":\"True\"}]\t{\"cpu\":\"4\"}\n"
        + "w1\ttrue\tv1.34.2\t[{\"type\":\"Ready\",\"status\":\"True\"}]\t{\"cpu\":\"4\",\"nvidia.com/gpu\":\"2\"}\n"
        + "w2\t\tv1.35.1\t[{\"type\":\"Ready\",\"status\":\"False\"}]\t{\"nvidia.com/gpu\":\"0\"}\n";

    static KubeVersion v(String s) { return KubeVersion.parse(s).orElseThrow(); }

    @Test void nodeStatesFromTheJsonpathLines() {
        Map<String, UpgradeSteps.NodeState> s = UpgradeSteps.nodeStates(NODES);
        assertEquals(new UpgradeSteps.NodeState("m", Optional.of(v("v1.35.1")), true, false, "0"), s.get("m"));
        assertEquals(new UpgradeSteps.NodeState("w1", Optional.of(v("v1.34.2")), true, true, "2"), s.get("w1"));
        assertEquals(false, s.get("w2").ready());
    }

    @Test void aNodeIsBackAtTheTargetReadyWithItsGpusAndUncordoned() {
        Map<String, UpgradeSteps.NodeState> s = UpgradeSteps.nodeStates(NODES);
        assertEquals(Optional.empty(), UpgradeSteps.back(s.get("m"), v("1.35"), Optional.empty()));
        assertEquals(Optional.of("w1: kubelet v1.34.2, cordoned"), UpgradeSteps.back(s.get("w1"), v("1.35"), Optional.of("2")));
        assertEquals(Optional.of("w2: not Ready, allocatable nvidia.com/gpu 0 of 1"), UpgradeSteps.back(s.get("w2"), v("1.35"), Optional.of("1")));
        assertEquals(Optional.of("m: kubelet v1.35.1"), UpgradeSteps.back(s.get("m"), v("1.35.2"), Optional.empty()));
    }

    @Test void aNodeIsWaitedForByTheEngineReadyWithItsGpusCordonedOrNotThenUncordoned(@org.junit.jupiter.api.io.TempDir Path dir) {
        Inventory inv = InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.34\", packages: system }\n"
            + "nodes:\n  - { name: m, address: 10.1.0.1, role: master, gpu: false }\n  - { name: w1, address: 10.1.0.2, role: worker, gpu: true }\n"
            + "  - { name: w2, address: 10.1.0.3, role: worker, gpu: true }\n", dir, Map.of("HOME", "/root"));
        Facts facts = new Facts();
        facts.put(GpuStep.gpuCountFact(inv.node("w1").orElseThrow()), "2", false);
        facts.put(GpuStep.gpuCountFact(inv.node("w2").orElseThrow()), "1", false);
        HostContext master = new HostContext(inv, inv.master());
        List<Op> w1 = new NodeBackStep(inv.node("w1").orElseThrow(), v("1.34")).apply(master);
        assertEquals(List.of("wait until w1 is Ready at 1.34 with its GPUs allocatable", "uncordon w1"), w1.stream().map(Op::what).toList());
        Op.Await await = (Op.Await) w1.get(0);
        assertEquals(NodeBackStep.WAIT, await.until().waitUpTo());
        assertEquals(Optional.empty(), await.until().judge().apply(new ExecResult(0, NODES, ""), facts), "still cordoned: the next op uncordons it");
        Op.Await w2 = (Op.Await) new NodeBackStep(inv.node("w2").orElseThrow(), v("1.35")).apply(master).get(0);
        assertEquals(Optional.of("w2: not Ready, allocatable nvidia.com/gpu 0 of 1"), w2.until().judge().apply(new ExecResult(0, NODES, ""), facts));
        assertTrue(!await.until().command().contains("sleep"), await.until().command());
    }

    @Test void versionRegexesMatchAMinorOrExactlyAPatch() {
        assertEquals("v1\\.35\\.", UpgradeSteps.versionRegex(v("1.35")));
        assertEquals("v1\\.35\\.1$", UpgradeSteps.versionRegex(v("1.35.1")));
    }

    @Test void aPatchTargetInstallsThatPatchsPackageVersion() {
        String minor = UpgradeSteps.install(java.util.List.of("kubeadm"), v("1.35"));
        assertTrue(minor.endsWith("--allow-change-held-packages kubeadm"), minor);
        String patch = UpgradeSteps.install(java.util.List.of("kubelet", "kubectl"), v("1.35.1"));
        assertTrue(patch.contains("apt-cache madison kubelet | awk '$3 ~ /^1\\.35\\.1-/ {print $3; exit}'"), patch);
        assertTrue(patch.endsWith("kubelet=\"$kubelet_v\" kubectl=\"$kubectl_v\""), patch);
    }

    @Test void nodesAtListsEveryNodeAndPicksByName() {
        String c = UpgradeSteps.nodesAt(java.util.List.of("w1"), v("1.35"));
        assertTrue(c.startsWith("kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes -o 'jsonpath="), "not get nodes NAME: one name answers an object\n" + c);
        assertTrue(c.contains("awk -v want=w1 ") && c.contains("$2 ~ /^v1\\.35\\./"), c);
    }

    @Test void theMastersPreflightJudgesTheNodesAgainstTheControlPlaneVersionItsFirstProbeLearned() {
        Inventory inv = InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.34\", packages: system }\n"
            + "nodes:\n  - { name: m, address: 10.1.0.1, role: master, gpu: false }\n  - { name: w1, address: 10.1.0.2, role: worker, gpu: false }\n",
            Path.of("."), Map.of("HOME", "/root"));
        List<Probe> all = new UpgradePreflightStep(v("1.35")).check(new HostContext(inv, inv.master()));
        Probe image = all.get(all.size() - 2);
        Probe nodes = all.get(all.size() - 1);
        assertTrue(image.command().endsWith("sed -n 's/^[[:space:]]*image:[[:space:]]*//p' $f") && !image.command().contains("kubectl"), image.command());
        assertTrue(nodes.command().startsWith("kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes"), nodes.command());
        assertEquals(Optional.of("no control plane here (/etc/kubernetes/manifests/kube-apiserver.yaml is missing): bootstrap the cluster first"),
            image.judge().apply(new ExecResult(3, "", "no /etc/kubernetes/manifests/kube-apiserver.yaml"), new Facts()));
        assertEquals(Map.of(), image.learn().apply(new ExecResult(3, "", "")));

        String ready = "m\t\tv1.34.2\t[{\"type\":\"Ready\",\"status\":\"True\"}]\t{}\nw1\t\tv1.34.2\t[{\"type\":\"Ready\",\"status\":\"True\"}]\t{}\n";
        Facts facts = new Facts();
        ExecResult manifest = new ExecResult(0, "registry.k8s.io/kube-apiserver:v1.34.2\n", "");
        assertEquals(Optional.empty(), image.judge().apply(manifest, facts));
        image.learn().apply(manifest).forEach((k, v) -> facts.put(k, v, false));
        assertEquals(Optional.empty(), nodes.judge().apply(new ExecResult(0, ready, ""), facts));
        assertEquals(Optional.of("w1 is not Ready: an upgrade starts from a healthy cluster (gpuctl verify says why)"),
            nodes.judge().apply(new ExecResult(0, ready.replaceFirst("(?s)(w1\t.*)True", "$1False"), ""), facts));
        assertEquals(Optional.of("cannot read kube-apiserver's version from /etc/kubernetes/manifests/kube-apiserver.yaml"),
            nodes.judge().apply(new ExecResult(0, ready, ""), new Facts()), "no version learned by the probe before it");
        Facts older = new Facts();
        image.learn().apply(new ExecResult(0, "registry.k8s.io/kube-apiserver:v1.33.4\n", "")).forEach((k, v) -> older.put(k, v, false));
        assertTrue(nodes.judge().apply(new ExecResult(0, ready, ""), older).isPresent(), "1.33 to 1.35 skips a minor");
        assertEquals(Optional.of("kubectl failed: refused"), nodes.judge().apply(new ExecResult(1, "", "refused"), facts));
    }
}
