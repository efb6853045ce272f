package dev.gpuctl.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.kube.ClusterViewTest;
import dev.gpuctl.kube.ClusterView;
import dev.gpuctl.kube.ClusterViewTest;
import dev.gpuctl.kube.KubectlPrints;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class DevCharTest {
    static String resource(String name) throws IOException {
        try (InputStream in = DevCharTest.class.getResourceAsStream("/h200/devchar/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The real H200's answer: its device nodes, and no /dev/char at all. */
    static String h200Listing() throws IOException {
        return resource("real-h200-ls-l-dev-nvidia.txt") + "--- /dev/char\n" + resource("real-h200-ls-l-dev-char.txt");
    }

    @Test void theRealH200sDeviceNodesAreReadAndNoneIsLinked() throws IOException {
        List<DevChar.Device> devs = DevChar.parse(h200Listing());
        assertEquals(List.of("/dev/nvidia0 195:0", "/dev/nvidiactl 195:255", "/dev/nvidia-uvm 238:0", "/dev/nvidia-uvm-tools 238:1",
            "/dev/nvidia-caps/nvidia-cap1 241:1", "/dev/nvidia-caps/nvidia-cap2 241:2"),
            devs.stream().map(d -> d.path() + " " + d.number()).toList());
        assertTrue(devs.stream().noneMatch(DevChar.Device::linked));
        String p = DevChar.linksProblem(h200Listing()).orElseThrow();
        assertTrue(p.startsWith("6 of 6 NVIDIA device node(s) without their /dev/char link: /dev/char/195:0 => /dev/nvidia0"), p);
        assertTrue(p.contains("Failed to initialize NVML: Unknown Error"), p);
    }

    /** The same host once nvidia-ctk made the links (absolute targets, as nvidia-ctk writes them; udev's are relative). */
    @Test void linksToEachNodeSatisfyIt_relativeOrAbsolute() throws IOException {
        String links = "--- /dev/char\ntotal 0\n"
            + "lrwxrwxrwx 1 root root 12 Dec  5 04:20 195:0 -> /dev/nvidia0\n"
            + "lrwxrwxrwx 1 root root 14 Dec  5 04:20 195:255 -> ../nvidiactl\n"
            + "lrwxrwxrwx 1 root root 15 Dec  5 04:20 238:0 -> /dev/nvidia-uvm\n"
            + "lrwxrwxrwx 1 root root 21 Dec  5 04:20 238:1 -> /dev/nvidia-uvm-tools\n"
            + "lrwxrwxrwx 1 root root 28 Dec  5 04:20 241:1 -> ../nvidia-caps/nvidia-cap1\n"
            + "lrwxrwxrwx 1 root root 28 Dec  5 04:20 241:2 -> /dev/nvidia-caps/nvidia-cap2\n"
            + "lrwxrwxrwx 1 root root  7 Dec  5 04:18 1:7 -> ../full\n";
        String listing = resource("real-h200-ls-l-dev-nvidia.txt") + links;
        assertTrue(DevChar.parse(listing).stream().allMatch(DevChar.Device::linked));
        assertEquals(java.util.Optional.empty(), DevChar.linksProblem(listing));
        // one link pointing at another device is no link for this one
        String wrong = listing.replace("195:0 -> /dev/nvidia0", "195:0 -> /dev/nvidia1");
        assertEquals("1 of 6", DevChar.linksProblem(wrong).orElseThrow().substring(0, 6));
    }

    @Test void noDeviceNodeMeansTheDriverIsNotLoaded() {
        assertTrue(DevChar.linksProblem("--- /dev/char\ntotal 0\n").orElseThrow().contains("not loaded"));
    }

    @Test void theRuleIsNvidiasPublishedText() {
        assertEquals("/lib/udev/rules.d/71-nvidia-dev-char.rules", DevChar.RULE_FILE);
        assertTrue(DevChar.RULE.contains("ACTION==\"add\", DEVPATH==\"/bus/pci/drivers/nvidia\","
            + " RUN+=\"/usr/bin/nvidia-ctk system create-dev-char-symlinks --create-all\"\n"), DevChar.RULE);
    }

    static final String PODS = "default/infer-w1-7d9f 10.0.0.11 ReplicaSet 255 Failed to initialize NVML: Unknown Error\n"
        + "default/train-w2-abcde w2 Job 0 GPU 0: NVIDIA H200 (UUID: GPU-9af2b8b1-7895-b3e8-a303-c9f68d62ff6d)\n"
        + "default/bare w1 - 255 Failed to initialize NVML: Unknown Error\n"
        + "ml/noimage w1 ReplicaSet 126 OCI runtime exec failed: exec failed: unable to start container process: exec: \"nvidia-smi\": executable file not found in $PATH: unknown\n"
        + "garbage line\n";

    @Test void podsThatLostTheirGpusAreNamedByNode_othersAreNot() {
        List<DevChar.PodNvml> pods = DevChar.parsePods(PODS.replace("10.0.0.11", "w1"));
        assertEquals(4, pods.size());
        List<DevChar.PodNvml> lost = DevChar.lostOn(pods, "w1");
        assertEquals(List.of("default/infer-w1-7d9f", "default/bare"), lost.stream().map(DevChar.PodNvml::pod).toList());
        assertTrue(lost.get(0).recreated());
        assertFalse(lost.get(1).recreated());
        assertEquals(List.of(), DevChar.lostOn(pods, "w2"));
        assertEquals(List.of("w1"), DevChar.nodesWithLost(pods));
        String p = DevChar.podsProblem(pods).orElseThrow();
        assertTrue(p.startsWith("2 running GPU pod(s) lost their GPUs"), p);
        assertTrue(p.contains("default/infer-w1-7d9f on w1, default/bare on w1"), p);
        // a pod without nvidia-smi in its image proves nothing either way
        assertEquals(java.util.Optional.empty(), DevChar.podsProblem(DevChar.parsePods(PODS.lines().skip(1).filter(l -> !l.contains("bare")).reduce("", (a, b) -> a + b + "\n"))));
    }

    @Test void thePodsCommandExecsNvidiaSmiInRunningGpuPodsOnly() {
        String cmd = DevChar.podsCommand(a -> "kubectl " + a);
        assertTrue(cmd.contains("[ \"$phase\" = Running ] && [ -n \"$gpus\" ]"), cmd);
        assertTrue(cmd.contains("kubectl exec -n \"$ns\" \"$pod\" -- nvidia-smi -L </dev/null"), cmd);
        assertTrue(cmd.contains("{.metadata.ownerReferences[0].kind}{\"/\"}{.spec.containers[*].resources.limits.nvidia\\.com/gpu}"), cmd);
    }

    /** A cluster read of the recorded pods: one Running pod with a GPU limit (a Job's on worker-2); the rest pending, done or GPU-less. */
    static ClusterView recordedView() throws IOException {
        return ClusterView.parse(KubectlPrints.clusterView(java.nio.file.Files.readString(ClusterViewTest.KUBECTL.resolve("nodes.json")),
            java.nio.file.Files.readString(ClusterViewTest.KUBECTL.resolve("pods.json"))));
    }

    @Test void theExecsAreMadeForTheRunningGpuPodsOfTheClusterReadAndReadAsTheListingOnesWere() throws Exception {
        String cmd = DevChar.execCommand(k -> "kubectl " + k, recordedView());
        assertEquals(1, cmd.split(" nvml ", -1).length - 1, cmd);
        assertTrue(cmd.endsWith(" nvml default detector-train-x7k2p worker-2 Job;"), cmd);
        // run with a kubectl that answers as a pod that lost its GPUs: the lines are the ones parsePods reads
        String fake = "kubectl() { echo 'Failed to initialize NVML: Unknown Error'; echo 'command terminated with exit code 255'; return 255; }; ";
        Process p = new ProcessBuilder("sh", "-c", fake + cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        List<DevChar.PodNvml> pods = DevChar.parsePods(out);
        assertEquals(List.of(new DevChar.PodNvml("default/detector-train-x7k2p", "worker-2", "Job", 255, "Failed to initialize NVML: Unknown Error")), pods);
        assertEquals(List.of("worker-2"), DevChar.nodesWithLost(pods));
    }

    @Test void noRunningGpuPodRunsNothingAndANameNoObjectCanHaveIsLeftOut() {
        assertEquals(DevChar.NO_GPU_POD, DevChar.execCommand(k -> "kubectl " + k, new ClusterView(List.of(), List.of(
            new ClusterView.PodState("default", "done", "w1", "Succeeded", List.of(), List.of(), "Job", List.of("1")),
            new ClusterView.PodState("kube-system", "plugin", "w1", "Running", List.of(), List.of(), "DaemonSet", List.of()),
            new ClusterView.PodState("default", "zero", "w1", "Running", List.of(), List.of(), "Job", List.of("0")),
            new ClusterView.PodState("default", "x;reboot", "w1", "Running", List.of(), List.of(), "Job", List.of("1"))))));
        String cmd = DevChar.execCommand(k -> "kubectl " + k, new ClusterView(List.of(), List.of(
            new ClusterView.PodState("team-a", "bare", "w2", "Running", List.of(), List.of(), "", List.of("", "2")))));
        assertTrue(cmd.endsWith(" nvml team-a bare w2 -;"), "a bare pod's owner is '-': " + cmd);
    }
}
