package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.kube.KubectlPrints;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Step 9's probes judged on kubectl's JSON (src/test/resources/kubectl/, a cluster of a master and three GPU workers). */
class GpuStepTest {
    static final Path KUBECTL = Path.of("src/test/resources/kubectl");

    static final Inventory INV = InventoryLoader.parse("inv.yaml", """
        cluster: { name: c, kubernetesVersion: "1.35", runtime: docker, packages: system }
        nodes:
          - { name: master, address: 10.1.0.1, role: master }
          - { name: worker-1, address: 10.1.0.2, role: worker }
          - { name: worker-2, address: 10.1.0.3, role: worker, labels: { gpu-memory: large } }
          - { name: worker-3, address: 10.1.0.4, role: worker }
          - { name: worker-9, address: 10.1.0.9, role: worker }
        """, Path.of("."), Map.of("HOME", "/root"));

    static List<Probe> check() { return new GpuStep().check(new HostContext(INV, INV.master())); }

    static Probe probe(String what) {
        return check().stream().filter(p -> p.what().startsWith(what)).findFirst().orElseThrow(() -> new AssertionError(what));
    }

    static String json(String name) throws IOException { return Files.readString(KUBECTL.resolve(name)); }

    /** What kubectl prints for the cluster question, from the recorded {@code get nodes -o json} and {@code get pods -o json}. */
    static String cluster() throws IOException { return KubectlPrints.clusterView(json("nodes.json"), json("pods.json")); }

    static Optional<String> judge(Probe p, String stdout, Facts facts) {
        return p.judge().apply(new ExecResult(0, stdout, ""), facts);
    }

    @Test void everyNodesProbesAskOneNodeListSoABatchRunsItOnce() {
        Set<String> commands = check().stream().filter(p -> !p.what().contains("device plugin")).map(Probe::command).collect(Collectors.toSet());
        assertEquals(Set.of(ClusterView.COMMAND), commands, "4 label probes and 4 capacity probes, 1 command");
    }

    @Test void labelsAreReadFromTheNodeList() throws IOException {
        String nodes = cluster();
        assertEquals(Optional.empty(), judge(probe("node worker-1 labelled"), nodes, new Facts()));
        assertEquals(Optional.of("labels missing or different: [gpu-memory]"), judge(probe("node worker-2 labelled"), nodes, new Facts()));
        assertEquals(Optional.of("node worker-9 not found (kubectl get nodes)"), judge(probe("node worker-9 labelled"), nodes, new Facts()));
        assertTrue(probe("node worker-1 labelled").judge().apply(new ExecResult(1, "", "The connection to the server was refused\n"), new Facts())
            .orElseThrow().startsWith("kubectl failed (exit 1): "));
    }

    @Test void allocatableIsComparedWithEachNodesNvidiaSmiCount() throws IOException {
        String out = cluster();
        Facts facts = new Facts();
        facts.put(GpuStep.gpuCountFact(INV.node("worker-1").orElseThrow()), "2", false);
        facts.put(GpuStep.gpuCountFact(INV.node("worker-2").orElseThrow()), "8", false);
        facts.put(GpuStep.gpuCountFact(INV.node("worker-3").orElseThrow()), "1", false);
        assertEquals(Optional.empty(), judge(probe("node worker-1 allocatable"), out, facts));
        assertEquals(Optional.of("allocatable nvidia.com/gpu is 4, nvidia-smi counts 8; no device plugin pod runs on worker-2"
                + " — check that nvidia is the default runtime on worker-2 (gpuctl verify --hosts worker-2)"),
            judge(probe("node worker-2 allocatable"), out, facts));
        assertTrue(judge(probe("node worker-3 allocatable"), out, facts).orElseThrow().startsWith("allocatable nvidia.com/gpu is 0, nvidia-smi counts 1"));
        assertEquals(Optional.of("node worker-9 not found (kubectl get nodes)"), judge(probe("node worker-9 allocatable"), out, facts));
    }

    @Test void theChecksAskForFieldsNotWholeObjects() {
        for (Probe p : check()) {
            if (p.what().contains("device plugin")) continue;
            assertTrue(p.command().contains("-o 'jsonpath={range .items[") && !p.command().contains("-o json"), p.command());
            assertTrue(!p.command().contains("env"), "a pod's environment is never asked for: " + p.command());
        }
    }

    @Test void theDevicePluginPodOfTheNodeIsNamedWithItsState() throws IOException {
        var pods = ClusterView.parse(cluster());
        assertEquals("device plugin pod kube-system/nvidia-device-plugin-daemonset-4qv8s is Running"
            + " (kubectl -n kube-system logs nvidia-device-plugin-daemonset-4qv8s)", GpuStep.pluginPod(pods, "worker-1"));
        assertEquals("no device plugin pod runs on worker-3", GpuStep.pluginPod(pods, "worker-3"));
    }

    static final Inventory SHARED = InventoryLoader.parse("inv.yaml", """
        cluster: { name: c, kubernetesVersion: "1.35", runtime: docker, packages: system, gpuSharing: { mode: time-slicing, replicas: 2 } }
        nodes:
          - { name: master, address: 10.1.0.1, role: master }
          - { name: worker-1, address: 10.1.0.2, role: worker }
          - { name: worker-2, address: 10.1.0.3, role: worker, gpuSharing: { mode: none } }
          - { name: worker-3, address: 10.1.0.4, role: worker, gpuSharing: { mode: mps, replicas: 4 } }
        """, Path.of("."), Map.of("HOME", "/root"));

    @Test void withSharingEachGpuNodeIsLabelledWithItsConfigAndCountedTimesItsReplicas() throws IOException {
        assertEquals(Map.of("nvidia.com/gpu.present", "true", "nvidia.com/device-plugin.config", "time-slicing-2"),
            GpuStep.labels(SHARED, SHARED.node("worker-1").orElseThrow()));
        assertEquals(Map.of("nvidia.com/gpu.present", "true", "nvidia.com/device-plugin.config", "none"),
            GpuStep.labels(SHARED, SHARED.node("worker-2").orElseThrow()), "an unshared node next to shared ones gets the 'none' config");
        assertEquals(Map.of("nvidia.com/gpu.present", "true", "nvidia.com/device-plugin.config", "mps-4", "nvidia.com/mps.capable", "true"),
            GpuStep.labels(SHARED, SHARED.node("worker-3").orElseThrow()));
        assertEquals(List.of("nvidia.com/mps.capable"), GpuStep.unwanted(SHARED, SHARED.node("worker-1").orElseThrow()));
        assertEquals(List.of("nvidia.com/device-plugin.config", "nvidia.com/mps.capable"), GpuStep.unwanted(INV, INV.node("worker-1").orElseThrow()),
            "without sharing, the labels of an earlier sharing setting are removed");
        assertEquals(List.of(), GpuStep.unwanted(INV, INV.master()));
        assertEquals(List.of("mps-4", "time-slicing-2"), GpuStep.sharingConfigs(SHARED).stream().map(c -> c.name()).sorted().toList());

        List<Probe> probes = new GpuStep().check(new HostContext(SHARED, SHARED.master()));
        Probe w1 = probes.stream().filter(p -> p.what().startsWith("node worker-1 allocatable")).findFirst().orElseThrow();
        assertEquals("node worker-1 allocatable nvidia.com/gpu = its nvidia-smi count × 2 (time-slicing)", w1.what());
        Facts facts = new Facts();
        facts.put(GpuStep.gpuCountFact(SHARED.node("worker-1").orElseThrow()), "2", false);
        String out = cluster(); // worker-1 advertises 2: right unshared, half of what 2 GPUs × 2 replicas give
        assertEquals(Optional.of("allocatable nvidia.com/gpu is 2, nvidia-smi counts 2 GPUs × 2 replicas = 4; device plugin pod"
                + " kube-system/nvidia-device-plugin-daemonset-4qv8s is Running (kubectl -n kube-system logs nvidia-device-plugin-daemonset-4qv8s)"
                + " — check that nvidia is the default runtime on worker-1 (gpuctl verify --hosts worker-1)"),
            judge(w1, out, facts));
        Probe labelled = probes.stream().filter(p -> p.what().startsWith("node worker-1 labelled")).findFirst().orElseThrow();
        assertEquals(Optional.of("labels missing or different: [nvidia.com/device-plugin.config]"), judge(labelled, cluster(), new Facts()));
    }
}
