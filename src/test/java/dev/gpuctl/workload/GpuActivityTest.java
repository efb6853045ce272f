package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.hostfiles.DeviceCheckpoint;
import dev.gpuctl.gpu.GpuSamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The idle decision on the real H200 samplings (idle, held idle, busy) beside the kubelet's checkpoint: only a GPU a
 * live pod holds with 0 % in every sample is idle.
 */
class GpuActivityTest {
    static final String TRAIN = "5e0b4b1e-7a4c-4d52-9d7e-1f3c2a9b8c01", NOTEBOOK = "0b7d9c2e-2f61-4c8e-a0f4-6d2e9b3c7a10";

    static GpuSamples.Window capture(String name) throws IOException {
        return GpuSamples.parse(Files.readString(Path.of("src/test/resources/h200/health", name)));
    }

    static List<DeviceCheckpoint.Entry> checkpoint(String name) throws IOException {
        return DeviceCheckpoint.parse(Files.readString(Path.of("src/test/resources/kubelet", name)));
    }

    static final String PODS = """
        {"items": [
          {"metadata": {"namespace": "team-a", "name": "train-x7k2p", "uid": "5e0b4b1e-7a4c-4d52-9d7e-1f3c2a9b8c01"}, "status": {"phase": "Running"}},
          {"metadata": {"namespace": "team-b", "name": "notebook-0", "uid": "0b7d9c2e-2f61-4c8e-a0f4-6d2e9b3c7a10"}, "status": {"phase": "Running"}},
          {"metadata": {"namespace": "team-a", "name": "done-abcde", "uid": "9f1e2d3c-0000-4000-8000-00000000dead"}, "status": {"phase": "Succeeded"}}]}""";

    @Test void aHeldGpuAtZeroPercentIsIdleABusyOneAndAFreeOneAreNot() throws IOException {
        var pods = GpuActivity.livePods(PODS);
        assertEquals(2, pods.size(), "a finished pod holds nothing, whatever the checkpoint still says");
        var cp = checkpoint("kubelet_internal_checkpoint-two-pods.json");
        var heldIdle = GpuActivity.node("h1", capture("held-idle-lms500.csv"), cp, pods).gpus().get(0);
        assertTrue(heldIdle.idle());
        assertEquals(List.of(new GpuActivity.PodRef("team-a", "train-x7k2p")), heldIdle.pods());
        assertEquals(21007L, heldIdle.memoryUsedMib());
        var busy = GpuActivity.node("h1", capture("busy-lms500.csv"), cp, pods).gpus().get(0);
        assertFalse(busy.idle());
        assertEquals(99, busy.utilMax());
        var free = GpuActivity.node("h1", capture("idle-lms500.csv"), List.of(), pods).gpus().get(0);
        assertFalse(free.idle(), "no pod holds it: free, not idle");
        assertTrue(free.pods().isEmpty());
    }

    @Test void theFinishedPodsEntryIsLeftOut() throws IOException {
        var cp = checkpoint("kubelet_internal_checkpoint-two-pods.json");
        var g = GpuActivity.node("h1", capture("held-idle-lms500.csv"), cp, GpuActivity.livePods(PODS)).gpus().get(0);
        assertEquals(1, g.pods().size(), g.pods()::toString);
        var none = GpuActivity.node("h1", capture("held-idle-lms500.csv"), cp.subList(2, 3), GpuActivity.livePods(PODS)).gpus().get(0);
        assertFalse(none.idle(), "held only by a finished pod: not idle");
    }

    @Test void aGpuSharedByTimeSlicingNamesEveryPod() throws IOException {
        var g = GpuActivity.node("h1", capture("held-idle-lms500.csv"), checkpoint("kubelet_internal_checkpoint-timeslicing.json"),
            GpuActivity.livePods(PODS)).gpus().get(0);
        assertEquals(List.of(new GpuActivity.PodRef("team-a", "train-x7k2p"), new GpuActivity.PodRef("team-b", "notebook-0")), g.pods());
        assertTrue(g.idle());
    }

    @Test void oneSampleAboveTheThresholdIsNotIdle() throws IOException {
        String lines = Files.readString(Path.of("src/test/resources/h200/health/held-idle-lms500.csv"));
        String oneBusy = lines.replaceFirst("21007, 143771\\n(.*?), 0, 0, 21007", "21007, 143771\n$1, " + (GpuActivity.IDLE_MAX_UTIL + 1) + ", 0, 21007");
        assertEquals(GpuActivity.IDLE_MAX_UTIL + 1, GpuSamples.parse(oneBusy).gpus().get(0).utilMax());
        var g = GpuActivity.node("h1", GpuSamples.parse(oneBusy), checkpoint("kubelet_internal_checkpoint-v1.json"), GpuActivity.livePods(PODS)).gpus().get(0);
        assertFalse(g.idle());
    }

    @Test void nothingSampledIsTheNodesProblem() {
        var n = GpuActivity.node("h1", GpuSamples.parse("No devices were found\n"), List.of(), Map.of());
        assertEquals("No devices were found", n.problem());
        assertTrue(n.gpus().isEmpty());
        assertEquals("nvidia-smi printed no sample", GpuActivity.node("h1", GpuSamples.parse(""), List.of(), Map.of()).problem());
    }

    @Test void theTableAndTheDocumentFlagOnlyTheIdleGpu() throws IOException {
        var pods = GpuActivity.livePods(PODS);
        var cp = checkpoint("kubelet_internal_checkpoint-two-pods.json");
        var report = new GpuActivity.Report(Duration.ofSeconds(3), List.of(
            GpuActivity.node("h1", capture("held-idle-lms500.csv"), cp, pods),
            GpuActivity.node("h2", capture("busy-lms500.csv"), cp, pods),
            GpuActivity.failed("h3", "h3: cannot connect to 10.0.0.3:22: connection refused.")));
        assertEquals("""
            GPU use over 3s (UTIL: mean utilization.gpu, MAX: highest sample, MEMORY: most used; IDLE: held by a pod, no sample above 0 %):
            NODE  GPU  POD                 UTIL  MAX   MEMORY               
            h1    0    team-a/train-x7k2p  0 %   0 %   21007 / 143771 MiB  IDLE
            h2    0    team-a/train-x7k2p  97 %  99 %  21887 / 143771 MiB
            h3: GPUs not sampled: h3: cannot connect to 10.0.0.3:22: connection refused.
            1 GPU is held but idle: h1 GPU 0 (team-a/train-x7k2p)
            """.replace("MEMORY               \n", "MEMORY\n"), GpusText.activityTable(report));
        String withTeams = GpusText.activityTable(report, Map.of("team-a", "a"));
        assertTrue(withTeams.contains("NODE  GPU  POD                 TEAM  UTIL  MAX   MEMORY"), withTeams);
        assertTrue(withTeams.contains("h1    0    team-a/train-x7k2p  a     0 %   0 %   21007 / 143771 MiB  IDLE\n"), withTeams);
        assertEquals("a", ((Map<?, ?>) ((List<?>) ((Map<?, ?>) ((List<?>) GpusText.activityDocument(report, Map.of("team-a", "a")).get("gpus"))
            .get(0)).get("pods")).get(0)).get("team"));
        var doc = GpusText.activityDocument(report);
        assertEquals(3.0, doc.get("windowSeconds"));
        assertEquals(0, doc.get("idleMaxUtilizationPercent"));
        @SuppressWarnings("unchecked") var gpus = (List<Map<String, Object>>) doc.get("gpus");
        assertEquals(List.of(true, false), gpus.stream().map(g -> g.get("idle")).toList());
        assertEquals("GPU-01bc1429-cdbb-796f-97d8-790afa7693b9", gpus.get(0).get("uuid"));
        assertEquals(List.of(Map.of("namespace", "team-a", "name", "train-x7k2p")), gpus.get(0).get("pods"));
        assertEquals(21007L, gpus.get(0).get("memoryUsedMiB"));
        assertEquals(List.of(Map.of("node", "h3", "error", "h3: cannot connect to 10.0.0.3:22: connection refused.")), doc.get("errors"));
    }
}
