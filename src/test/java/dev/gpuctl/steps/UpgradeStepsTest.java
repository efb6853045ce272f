package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostconf.KubeVersion;
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
}
