package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The master's one cluster read, parsed from what kubectl prints for it (recorded lists in src/test/resources/kubectl/). */
public class ClusterViewTest {
    public static final Path KUBECTL = Path.of("src/test/resources/kubectl");

    /** A node kubeadm just registered (no Ready condition yet), a cordoned GPU node with gpuctl's record and a NotReady one. */
    static final String MORE_NODES = """
        {"items": [
          {"kind": "Node", "metadata": {"name": "fresh"}, "spec": {}, "status": {}},
          {"kind": "Node", "metadata": {"name": "gpu-9", "labels": {"nvidia.com/gpu.present": "true"},
            "annotations": {"gpuctl.dev/gpus-at-bootstrap": "0:GPU-a,1:GPU-b", "gpuctl.dev/last-repair": "2026-12-04T10:00:00Z;proved;remedies=reboot", "flannel.alpha.coreos.com/public-ip": "10.0.0.9"}},
           "spec": {"unschedulable": true, "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]},
           "status": {"allocatable": {"nvidia.com/gpu": "2", "nvidia.com/mig-1g.18gb": "7"},
             "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}]}},
          {"kind": "Node", "metadata": {"name": "down"}, "spec": {},
           "status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}]}}
        ]}""";

    static final String WAITING_POD = """
        {"items": [{"kind": "Pod", "metadata": {"namespace": "kube-flannel", "name": "kube-flannel-ds-x"}, "spec": {"nodeName": "gpu-9"},
          "status": {"phase": "Running", "containerStatuses": [{"name": "a", "state": {"running": {}}},
            {"name": "kube-flannel", "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}}}]}}]}""";

    static String recorded(String name) throws IOException { return Files.readString(KUBECTL.resolve(name)); }

    @Test void nodesAndPodsAreReadFromOneAnswer() throws IOException {
        ClusterView v = ClusterView.parse(KubectlPrints.clusterView(recorded("nodes.json"), recorded("pods.json")));
        assertEquals(List.of("master", "worker-1", "worker-2", "worker-3"), v.nodes().stream().map(ClusterView.NodeState::name).toList());
        ClusterView.NodeState master = v.node("master").orElseThrow();
        assertEquals(List.of("node-role.kubernetes.io/control-plane"), master.taintKeys());
        assertEquals(Map.of("node-role.kubernetes.io/control-plane", ""), master.labels());
        assertEquals("0", master.allocatable("nvidia.com/gpu"));
        assertEquals("4", v.node("worker-2").orElseThrow().allocatable("nvidia.com/gpu"));
        assertEquals(Optional.empty(), v.node("worker-1").orElseThrow().gpuRecord());
        assertFalse(v.node("worker-1").orElseThrow().unschedulable());
        assertEquals(Optional.empty(), v.node("worker-9"));
        assertEquals(5, v.pods().size());
        ClusterView.PodState plugin = v.podsIn("kube-system").get(0);
        assertEquals(new ClusterView.PodState("kube-system", "nvidia-device-plugin-daemonset-4qv8s", "worker-1", "Running", List.of(), List.of(),
            "DaemonSet", List.of()), plugin);
        assertFalse(plugin.runningWithGpus(), "the device plugin asks for no GPU");
        assertEquals("", v.pods().stream().filter(p -> p.name().startsWith("huge")).findFirst().orElseThrow().node(), "an unscheduled pod");
    }

    @Test void readinessCordonsTheGpuRecordAndWaitingContainersAreRead() throws IOException {
        ClusterView v = ClusterView.parse(KubectlPrints.clusterView(MORE_NODES, WAITING_POD));
        assertEquals(Optional.empty(), v.node("fresh").orElseThrow().ready());
        ClusterView.NodeState gpu = v.node("gpu-9").orElseThrow();
        assertTrue(gpu.unschedulable());
        assertEquals(Optional.of("0:GPU-a,1:GPU-b"), gpu.gpuRecord(), "only gpuctl's annotation is asked for");
        assertEquals(Optional.of("2026-12-04T10:00:00Z;proved;remedies=reboot"), gpu.lastRepair());
        assertEquals(Optional.empty(), v.node("fresh").orElseThrow().lastRepair(), "never repaired");
        assertEquals(Optional.of(new ClusterView.Condition(true, "KubeletReady", "kubelet is posting ready status")), gpu.ready());
        assertEquals("7", gpu.allocatable("nvidia.com/mig-1g.18gb"));
        assertEquals(Optional.of(new ClusterView.Condition(false, "NodeStatusUnknown", "Kubelet stopped posting node status.")),
            v.node("down").orElseThrow().ready());
        ClusterView.PodState flannel = v.podsIn("kube-flannel").get(0);
        assertEquals(List.of("CrashLoopBackOff"), flannel.waitingReasons());
        assertEquals("CrashLoopBackOff", flannel.state());
        assertEquals("Unknown", new ClusterView.PodState("a", "b", "", "", List.of()).state());
    }

    @Test void theCommandAsksOneKubectlCallForTheFieldsOnlyByKind() {
        assertEquals(1, ClusterView.COMMAND.split("kubectl ", -1).length - 1, ClusterView.COMMAND);
        assertTrue(ClusterView.COMMAND.contains("get nodes,pods -A -o 'jsonpath={range .items[?(@.kind==\"Node\")]}N{\"\\t\"}{.metadata.name}"),
            ClusterView.COMMAND);
        assertTrue(ClusterView.COMMAND.contains("{.metadata.annotations.gpuctl\\.dev/gpus-at-bootstrap}"), "one annotation, not all of them");
        assertFalse(ClusterView.COMMAND.contains("env") || ClusterView.COMMAND.contains("-o json"), "no environment, no whole objects");
    }

    @Test void aLineThatIsNeitherANodeNorAPodIsRefusedWithItsNumber() {
        var e = assertThrows(IllegalArgumentException.class, () -> ClusterView.parse("N\tm\t{}\n" + "garbage\n"));
        assertTrue(e.getMessage().startsWith("kubectl's line 1 is not a node (N + 8 fields) or a pod (P + 10 fields)"), e.getMessage());
        var json = assertThrows(IllegalArgumentException.class, () -> ClusterView.parse("N\tm\t{not json\t\t\t\t\t\t\n"));
        assertTrue(json.getMessage().startsWith("kubectl's line 1: the labels are not JSON"), json.getMessage());
        assertEquals(new ClusterView(List.of(), List.of()), ClusterView.parse(""));
    }
}
