package dev.gpuctl.gpu;

import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * Whether a device plugin pod's status says anything about now. After a node boots, the API server still holds the
 * status its kubelet posted before the boot (RunContainerError, CrashLoopBackOff) until the kubelet syncs the pod
 * again: such a status is stale, and the plugin that has not re-registered yet is still starting, like the kubelet
 * itself: verify says so when it names the pod, and waits (bounded) for the plugin as for any error status, which the
 * kubelet retries (a CrashLoopBackOff after the runtime was fixed comes back by itself). Pure.
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
}
