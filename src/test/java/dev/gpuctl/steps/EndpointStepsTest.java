package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.EndpointMigration;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Growing a single master: preflight's refusal from what the cluster says, the endpoint step's judgements of the
 * host's answers, and the kubelets' phases one node at a time.
 */
class EndpointStepsTest {
    static Inventory inventory(String endpoint, String m2Role) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: lab, kubernetesVersion: \"1.35\"" + endpoint + " }\nnodes:\n"
            + "  - { name: m1, address: 10.0.0.11, role: master }\n  - { name: m2, address: 10.0.0.12, role: " + m2Role + " }\n"
            + "  - { name: m3, address: 10.0.0.13, role: " + m2Role + " }\n  - { name: w1, address: 10.0.0.21, role: worker }\n",
            Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static final Inventory GROWN = inventory(", controlPlaneEndpoint: { vip: 10.0.0.100 }", "master");

    static HostContext on(Inventory inv, String node) { return new HostContext(inv, inv.node(node).orElseThrow()); }

    static Optional<String> judge(Probe p, String stdout) {
        return p.judge().apply(new ExecResult(0, stdout, ""), new Facts());
    }

    static String clusterAnswer(String endpoint, String ready) {
        String cc = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n" + (endpoint.isEmpty() ? "" : "controlPlaneEndpoint: " + endpoint + "\n");
        return "{\"data\":{\"ClusterConfiguration\":" + dev.gpuctl.text.Json.MAPPER.valueToTree(cc) + "}}\n" + EndpointMigration.SEPARATOR
            + "\n{\"items\":[{\"metadata\":{\"name\":\"m1\",\"labels\":{\"node-role.kubernetes.io/control-plane\":\"\"}},"
            + "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"" + ready + "\"}]}}]}\n";
    }

    @Test void preflightLetsASingleMasterGrowAndRefusesWhileItIsDown() {
        Probe p = new ControlPlaneChangeStep().check(on(GROWN, "m1")).get(0);
        assertEquals(Optional.empty(), judge(p, clusterAnswer("10.0.0.11:6443", "True")));
        assertEquals(Optional.empty(), judge(p, clusterAnswer("", "True")));
        assertEquals(Optional.empty(), judge(p, ""), "no cluster yet: nothing to judge");
        assertTrue(judge(p, clusterAnswer("10.0.0.11:6443", "False")).orElseThrow().startsWith("master m1 is not Ready"));
        assertEquals(Map.of(ControlPlaneChangeStep.VIEW.name(), clusterAnswer("", "True")),
            p.learn().apply(new ExecResult(0, clusterAnswer("", "True"), "")));
        assertEquals(List.of(true, false, false, false), List.of("m1", "m2", "m3", "w1").stream()
            .map(n -> new ControlPlaneChangeStep().runsOn(on(GROWN, n))).toList());
    }

    @Test void theEndpointStepJudgesWhatTheFirstMasterSays() {
        HostContext m1 = on(GROWN, "m1");
        String cm = "{\"data\":{\"ClusterConfiguration\":\"kind: ClusterConfiguration\\ncontrolPlaneEndpoint: 10.0.0.11:6443\\n\"}}";
        assertEquals(Optional.of("kubeadm-config says controlPlaneEndpoint 10.0.0.11:6443, the inventory 10.0.0.100:8443"),
            judge(EndpointStep.kubeadmConfig(m1), cm));
        assertEquals(Optional.empty(), judge(EndpointStep.kubeadmConfig(m1), cm.replace("10.0.0.11:6443", "10.0.0.100:8443")));
        String san = "X509v3 Subject Alternative Name: \n    DNS:kubernetes, DNS:m1, IP Address:10.96.0.1, IP Address:10.0.0.11\n";
        assertTrue(judge(EndpointStep.certificateServed(m1), san).orElseThrow().contains("has no SAN for 10.0.0.100"));
        assertEquals(Optional.empty(), judge(EndpointStep.certificateOnDisk(m1), san.strip() + ", IP Address:10.0.0.100\n"));
        assertEquals(Optional.of("/etc/kubernetes/admin.conf names https://10.0.0.11:6443, not https://10.0.0.100:8443"),
            judge(EndpointStep.adminConf(m1), "/etc/kubernetes/admin.conf https://10.0.0.11:6443 \n"));
        assertEquals(Optional.empty(), judge(EndpointStep.adminConf(m1),
            "/etc/kubernetes/admin.conf https://10.0.0.100:8443 \n/etc/kubernetes/super-admin.conf https://10.0.0.100:8443 \n"));
        assertEquals(Optional.empty(), judge(EndpointStep.kubeProxy(m1), ""), "no kube-proxy ConfigMap: nothing to point");
        // a master without a cluster: nothing to move
        for (Probe p : List.of(EndpointStep.kubeadmConfig(m1), EndpointStep.adminConf(m1), EndpointStep.clusterInfo(m1))) {
            assertEquals(Optional.empty(), judge(p, ""));
        }
    }

    @Test void kubeProxysPodsAreRestartedRightAfterItsConfigMapChangesAndOnlyThen() {
        List<Op> ops = new EndpointStep().apply(on(GROWN, "m1"));
        int replace = -1;
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i) instanceof Op.Run r && r.what().startsWith("kube-proxy's kubeconfig")) replace = i;
        }
        Op.Run cm = (Op.Run) ops.get(replace);
        assertEquals(List.of(EndpointStep.KUBE_PROXY_CHANGED), cm.changes(), "the replace records that it changed the ConfigMap");
        Op.Run restart = (Op.Run) ops.get(replace + 1);
        assertEquals("kubectl --kubeconfig=/etc/kubernetes/admin.conf delete pod -n kube-system -l k8s-app=kube-proxy", restart.command());
        assertEquals(List.of(EndpointStep.KUBE_PROXY_CHANGED), restart.onlyIfChanged(),
            "a re-run whose ConfigMap is already right (the replace skipped) restarts nothing");
        assertTrue(restart.what().contains("kubectl delete pod -n kube-system -l k8s-app=kube-proxy"), restart.what());
        Op.Await wait = (Op.Await) ops.get(replace + 2);
        assertEquals(EndpointStep.KUBE_PROXY_WAIT, wait.until().waitUpTo());
        assertEquals(Optional.empty(), judge(wait.until(), ""), "no kube-proxy DaemonSet: nothing to wait for");
        String ds = "{\"metadata\":{\"uid\":\"d1\"},\"status\":{\"desiredNumberScheduled\":2}}";
        String pod = "{\"metadata\":{\"name\":\"kube-proxy-a\",\"ownerReferences\":[{\"uid\":\"d1\"}]},\"spec\":{\"nodeName\":\"m1\"},"
            + "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"ready\":true}]}}";
        assertEquals(Optional.of("kube-system/kube-proxy has 1 of 2 pods Running and ready"),
            judge(wait.until(), "{\"ds\": " + ds + ", \"pods\": {\"items\":[" + pod + "]}}"));
        assertEquals(Optional.empty(), judge(wait.until(), "{\"ds\": " + ds + ", \"pods\": {\"items\":[" + pod + ","
            + pod.replace("kube-proxy-a", "kube-proxy-b").replace("m1", "w1") + "]}}"));
    }

    @Test void theKubeadmPhasesGetTheClustersConfigurationWithTheNewEndpoint() {
        String cmd = EndpointStep.withConfig(on(GROWN, "m1"), "kubeadm init phase certs apiserver --config \"$f\"");
        assertTrue(cmd.contains("kind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: \"10.0.0.11\"\n"), cmd);
        assertTrue(cmd.contains("---\n{{" + EndpointStep.CC_FACT + "}}controlPlaneEndpoint: \"10.0.0.100:8443\"\nGPUCTL_EOF\n"
            + "kubeadm init phase certs apiserver --config \"$f\""), cmd);
        assertTrue(cmd.startsWith("f=$(mktemp) && trap 'rm -f \"$f\"' EXIT"), cmd);
    }

    @Test void kubeletsMoveOneNodeAPhaseOnTheFirstMasterAndTheWorkers() {
        List<Phase> phases = Steps.oneNodeAtATime(Steps.phases(), GROWN);
        List<String> ids = phases.stream().map(Phase::id).filter(i -> i.startsWith(KubeletEndpointStep.ID)).toList();
        assertEquals(List.of("endpoint-kubelets-m1", "endpoint-kubelets-m2", "endpoint-kubelets-m3", "endpoint-kubelets-w1"), ids);
        int kubelets = phases.stream().map(Phase::id).toList().indexOf("endpoint-kubelets-m1");
        int masters = phases.stream().map(Phase::id).toList().indexOf("masters");
        int controlPlane = phases.stream().map(Phase::id).toList().indexOf("control-plane");
        assertTrue(controlPlane < kubelets && kubelets < masters, ids::toString);
        Step w1Only = phases.stream().filter(p -> p.id().equals("endpoint-kubelets-w1")).findFirst().orElseThrow().steps().get(0);
        assertEquals(List.of(false, false, false, true), List.of("m1", "m2", "m3", "w1").stream().map(n -> w1Only.runsOn(on(GROWN, n))).toList());
        KubeletEndpointStep all = new KubeletEndpointStep();
        assertEquals(List.of(true, false, false, true), List.of("m1", "m2", "m3", "w1").stream().map(n -> all.runsOn(on(GROWN, n))).toList(),
            "a joined master's kubelet talks to its own API server");
        Probe server = KubeletEndpointStep.server(on(GROWN, "w1"));
        assertEquals(Optional.of("/etc/kubernetes/kubelet.conf names https://10.0.0.11:6443, not https://10.0.0.100:8443"),
            judge(server, "https://10.0.0.11:6443\n"));
        assertEquals(Optional.empty(), judge(server, "https://10.0.0.100:8443\n"));
        assertEquals(Optional.empty(), judge(server, ""), "not joined yet");
        assertTrue(Steps.ids().containsAll(Set.of("endpoint", KubeletEndpointStep.ID)));
    }

    @Test void theEndpointStepRunsOnTheFirstMasterOnly() {
        Inventory single = inventory("", "worker");
        assertEquals(List.of(true, false, false, false), List.of("m1", "m2", "m3", "w1").stream()
            .map(n -> new EndpointStep().runsOn(on(single, n))).toList());
        assertEquals("10.0.0.11:6443", EndpointStep.wanted(on(single, "m1")));
    }
}
