package dev.gpuctl.hostconf;

import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * Whether a device plugin pod's status says anything about now. After a node boots, the API server still holds the
 * status its kubelet posted before the boot (RunContainerError, CrashLoopBackOff) until the kubelet syncs the pod
 * again: such a status is stale, and the plugin that has not re-registered yet is still starting, like the kubelet
 * itself. A status the kubelet posted since the node became Ready is news: an error there is the plugin's own. Pure.
 */
public final class PluginStatus {
    private PluginStatus() {}

    /** Waiting reasons that say a container cannot run (not that it is being created). */
    public static final Set<String> ERRORS = Set.of("CrashLoopBackOff", "RunContainerError", "CreateContainerError",
        "CreateContainerConfigError", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "StartError");

    /**
     * True when the pod's newest status time predates the node's last Ready transition (its kubelet's Ready after a
     * boot or a restart): what it says was posted before. A pod that names no time says nothing new; a node without a
     * Ready time makes no status stale.
     */
    public static boolean stale(Optional<Instant> podStatusTime, Optional<Instant> nodeReadySince) {
        if (nodeReadySince.isEmpty()) return false;
        return podStatusTime.isEmpty() || podStatusTime.get().isBefore(nodeReadySince.get());
    }

    /**
     * Whether a node's device plugin, as the cluster view shows it, may still come up (worth waiting for, bounded):
     * not Ready yet, no plugin pod yet, a pod being created or running but not registered yet, or an error status from
     * before the node's Ready transition. False only for an error the kubelet posted since: a definite failure.
     */
    public static boolean stillStarting(ClusterView view, String node) {
        Optional<ClusterView.NodeState> n = view.node(node);
        if (n.isEmpty() || n.get().ready().map(c -> !c.isTrue()).orElse(true)) return true;
        Optional<Instant> readySince = n.get().ready().flatMap(ClusterView.Condition::since);
        for (ClusterView.PodState p : view.pods()) {
            if (!p.name().contains("nvidia-device-plugin") || !node.equals(p.node())) continue;
            if (!ERRORS.contains(p.state())) return true;
            return stale(p.statusTime(), readySince);
        }
        return true;
    }
}
