package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.kube.KubectlPrints;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A device plugin pod's status against its node's boot: stale (still starting) or news (its own failure). */
class PluginStatusTest {
    static final Instant BOOT = Instant.parse("2026-12-04T10:00:30Z");

    @Test
    void aStatusFromBeforeTheNodesReadyTransitionIsStale() {
        assertTrue(PluginStatus.stale(Optional.of(Instant.parse("2026-12-03T08:00:00Z")), Optional.of(BOOT)));
        assertFalse(PluginStatus.stale(Optional.of(Instant.parse("2026-12-04T10:00:41Z")), Optional.of(BOOT)));
        assertFalse(PluginStatus.stale(Optional.of(BOOT), Optional.of(BOOT)), "posted at the very transition: news");
        assertTrue(PluginStatus.stale(Optional.empty(), Optional.of(BOOT)), "a status that names no time says nothing new");
        assertFalse(PluginStatus.stale(Optional.of(Instant.parse("2026-12-03T08:00:00Z")), Optional.empty()), "no Ready time: nothing to compare");
    }

    /** A node Ready since {@code readySince}, and its plugin pod waiting with RunContainerError, its last exit at {@code finishedAt}. */
    static ClusterView view(String readyStatus, String readySince, String reason, String finishedAt) {
        String nodes = """
            {"items": [{"kind": "Node", "metadata": {"name": "h1"}, "spec": {}, "status": {"allocatable": {"nvidia.com/gpu": "0"},
              "conditions": [{"type": "Ready", "status": "%s", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2026-12-04T10:01:00Z", "lastTransitionTime": "%s"}]}}]}""".formatted(readyStatus, readySince);
        String pods = """
            {"items": [{"kind": "Pod", "metadata": {"namespace": "kube-system", "name": "nvidia-device-plugin-daemonset-7xk2p"},
              "spec": {"nodeName": "h1"}, "status": {"phase": "Running",
                "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-01T09:00:00Z"},
                               {"type": "Ready", "status": "False", "lastTransitionTime": "2026-12-03T07:59:58Z"}],
                "containerStatuses": [{"name": "nvidia-device-plugin-ctr", "state": {"waiting": {"reason": "%s"}},
                  "lastState": {"terminated": {"exitCode": 128, "reason": "ContainerCannotRun", "finishedAt": "%s"}}}]}}]}"""
            .formatted(reason, finishedAt);
        return ClusterView.parse(KubectlPrints.clusterView(nodes, pods));
    }

    @Test
    void theClusterViewCarriesThePodsStatusTimeAndTheNodesReadyTransition() {
        ClusterView before = view("True", "2026-12-04T10:00:30Z", "RunContainerError", "2026-12-03T08:00:00Z");
        var pod = before.pods().get(0);
        assertEquals(Optional.of(Instant.parse("2026-12-03T08:00:00Z")), pod.statusTime());
        assertEquals(Optional.of(BOOT), before.node("h1").orElseThrow().ready().orElseThrow().since());
        assertTrue(PluginStatus.stale(pod.statusTime(), before.node("h1").orElseThrow().ready().orElseThrow().since()));
    }
}
