package dev.gpuctl.gpu;

import dev.gpuctl.hostfiles.DeviceCheckpoint;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeFields;
import java.time.Duration;
import java.util.Locale;

/**
 * What {@code gpuctl gpus} asks, and the keys its answers are kept under: the cluster's nodes and pods on the master
 * (the fields the report reads, {@link KubeFields}), and on every GPU node nvidia-smi's list of GPUs and, for a
 * sampled window, the kubelet's device checkpoint and the GPUs' utilisation. The engine asks them (one batch per
 * host, all hosts at once) and the report reads each answer by its key. Pure.
 */
public final class GpuQuestions {
    private GpuQuestions() {}

    public static final String NODES_KEY = "gpus.cluster.nodes";
    public static final String PODS_KEY = "gpus.cluster.pods";

    public static final String NODES = Kube.kubectl("get nodes " + KubeFields.NODES.outputFlag());
    public static final String PODS = Kube.kubectl("get pods -A " + KubeFields.GPU_PODS.outputFlag());
    /** nvidia-smi's GPU list, its errors in the answer (they say why: no driver, a fallen-off GPU). */
    public static final String SMI = NvidiaSmi.QUERY_COMMAND + " 2>&1";
    /** The kubelet's device checkpoint; empty when there is none (no device plugin yet). */
    public static final String CHECKPOINT = "cat " + DeviceCheckpoint.PATH + " 2>/dev/null; true";

    public static String smiKey(String node) { return "gpus." + node + ".smi"; }

    public static String checkpointKey(String node) { return "gpus." + node + ".checkpoint"; }

    public static String samplesKey(String node) { return "gpus." + node + ".samples"; }

    /**
     * The GPUs sampled for {@code window}: nvidia-smi's {@code -lms} loop stopped by {@code timeout}, whose exit 124 is
     * the normal end (127: nvidia-smi is missing).
     */
    public static String samples(Duration window) {
        return "timeout " + String.format(Locale.ROOT, "%.3f", window.toMillis() / 1000.0) + " " + GpuSamples.COMMAND + " 2>&1";
    }
}
