package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The drain's decisions over typed pod facts, and the facts read from kubectl's answer. */
class NodeDrainTest {
    static NodeDrain.Pod pod(String ns, String name, String node, String phase, String owner, int gpus) {
        return new NodeDrain.Pod(ns, name, node, phase, owner, owner.isEmpty() ? "" : name + "-owner", gpus);
    }

    @Test void aRunningGpuJobOrBareGpuPodIsGuardedAndNothingElseIs() {
        assertTrue(NodeDrain.guarded(pod("team-a", "train-42", "h3", "Running", "Job", 4)));
        assertTrue(NodeDrain.guarded(pod("team-a", "train-43", "h3", "Pending", "Job", 1)), "a Job pod starting on the node");
        assertTrue(NodeDrain.guarded(pod("team-a", "notebook", "h3", "Running", "", 1)), "a bare GPU pod is nobody's to restart");
        assertFalse(NodeDrain.guarded(pod("team-a", "done", "h3", "Succeeded", "Job", 4)), "finished");
        assertFalse(NodeDrain.guarded(pod("team-a", "failed", "h3", "Failed", "Job", 4)), "finished");
        assertFalse(NodeDrain.guarded(pod("team-a", "prep", "h3", "Running", "Job", 0)), "a CPU-only Job pod is evicted");
        assertFalse(NodeDrain.guarded(pod("team-a", "serve", "h3", "Running", "ReplicaSet", 2)), "a service is restarted elsewhere");
        assertFalse(NodeDrain.guarded(pod("kube-system", "nvidia-device-plugin-x", "h3", "Running", "DaemonSet", 0)));
    }

    @Test void toEvictLeavesDaemonSetAndMirrorPodsAndFinishedOnes() {
        assertTrue(NodeDrain.toEvict(pod("d", "web", "h3", "Running", "ReplicaSet", 0)));
        assertTrue(NodeDrain.toEvict(pod("d", "bare", "h3", "Running", "", 0)));
        assertFalse(NodeDrain.toEvict(pod("kube-flannel", "ds", "h3", "Running", "DaemonSet", 0)));
        assertFalse(NodeDrain.toEvict(pod("kube-system", "kube-apiserver-m", "m", "Running", "Node", 0)));
        assertFalse(NodeDrain.toEvict(pod("d", "done", "h3", "Succeeded", "Job", 1)));
    }

    @Test void guardedOnGroupsByNodeInTheNodesOrderAndIgnoresOtherNodes() {
        var pods = List.of(pod("team-a", "train-42", "h3", "Running", "Job", 4), pod("team-b", "x", "h1", "Running", "", 1),
            pod("team-c", "y", "h9", "Running", "Job", 8), pod("team-a", "z", "h3", "Running", "Job", 1));
        Map<String, List<NodeDrain.Pod>> g = NodeDrain.guardedOn(pods, List.of("h3", "h1", "h2"));
        assertEquals(List.of("h3", "h1"), List.copyOf(g.keySet()));
        assertEquals(2, g.get("h3").size());
        assertEquals("h3: still runs team-a/train-42 on 4 GPUs, team-a/z on 1 GPU; re-run later, or with --force to evict them\n"
            + "h1: still runs team-b/x on 1 GPU; re-run later, or with --force to evict it", NodeDrain.left(g));
        assertEquals("h3: still runs team-a/train-42 on 4 GPUs, team-a/z on 1 GPU; h1: still runs team-b/x on 1 GPU",
            NodeDrain.withoutAdvice(NodeDrain.left(g)));
    }

    @Test void theBriefsMessageForOneJob() {
        assertEquals("h3: still runs team-a/train-42 on 4 GPUs; re-run later, or with --force to evict it",
            NodeDrain.left("h3", List.of(pod("team-a", "train-42", "h3", "Running", "Job", 4))));
    }

    @Test void podsAreReadFromKubectlsAnswerWithTheControllerAsOwnerAndGpusFromLimitsOrRequests() throws Exception {
        String json = """
            {"items": [
              {"metadata": {"namespace": "team-a", "name": "train-42", "ownerReferences": [{"kind": "Job", "name": "train", "controller": true}]},
               "spec": {"nodeName": "h3", "containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}]}, "status": {"phase": "Running"}},
              {"metadata": {"namespace": "default", "name": "bare"},
               "spec": {"nodeName": "h3", "containers": [{"resources": {"requests": {"nvidia.com/gpu": 2}}}, {"resources": {}}]}},
              {"metadata": {"name": "odd", "ownerReferences": [{"kind": "Other", "name": "o"}, {"kind": "ReplicaSet", "name": "rs", "controller": true}]},
               "spec": {"nodeName": "h1"}, "status": {"phase": "Succeeded"}}
            ]}""";
        var pods = NodeDrain.pods(new ObjectMapper().readTree(json));
        assertEquals(List.of(
            new NodeDrain.Pod("team-a", "train-42", "h3", "Running", "Job", "train", 4),
            new NodeDrain.Pod("default", "bare", "h3", "Pending", "", "", 2),
            new NodeDrain.Pod("default", "odd", "h1", "Succeeded", "ReplicaSet", "rs", 0)), pods);
    }

    @Test void theFieldsQueryFoldsBackIntoTheSamePods() {
        String line = String.join("\t", "team-a", "train-42", "2026-01-01T00:00:00Z", "[{\"kind\":\"Job\",\"name\":\"train\",\"controller\":true}]",
            "h3", "Running", "", "", "", "{\"limits\":{\"nvidia.com/gpu\":\"4\"}}", "") + "\n";
        assertEquals(List.of(new NodeDrain.Pod("team-a", "train-42", "h3", "Running", "Job", "train", 4)),
            NodeDrain.pods(NodeDrain.PODS.list(line)));
    }

    @Test void kubectlDrainIsAskedToIgnoreDaemonSetsDeleteEmptyDirsAndStopAtTheTimeout() {
        assertEquals("drain h3 --ignore-daemonsets --delete-emptydir-data --timeout=600s",
            NodeDrain.kubectlDrainArgs("h3", Duration.ofMinutes(10), false));
        assertEquals("drain h3 --ignore-daemonsets --delete-emptydir-data --timeout=2s --force",
            NodeDrain.kubectlDrainArgs("h3", Duration.ofMillis(1500), true));
        assertEquals("1s", NodeDrain.goDuration(Duration.ZERO));
    }

    @Test void cordonedNodesAreNamedWithTheWayBack() {
        assertEquals("w2 is cordoned (SchedulingDisabled): no new pods there; `gpuctl uncordon w2` ends the maintenance",
            NodeDrain.cordonedProblem(List.of("w2")));
        assertEquals("w2, w3 are cordoned (SchedulingDisabled): no new pods there; `gpuctl uncordon w2 w3` ends the maintenance",
            NodeDrain.cordonedProblem(List.of("w2", "w3")));
    }
}
