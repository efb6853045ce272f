package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.gpu.GpuQuestions;
import dev.gpuctl.kube.KubeFields;
import dev.gpuctl.kube.KubectlPrints;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.remote.ExecResult;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What gpus and job submit ask which host, with scripted hosts: answers in, report or refusal out. */
class GpuSurveyTest {
    static final Inventory EXAMPLE = InventoryLoader.load(Path.of("inventory.example.yaml"));

    static ExecResult ok(String out) { return new ExecResult(0, out, ""); }

    /** The master's answers to submit's checks: the recorded nodes, and job default/taken running. */
    static MasterAnswers master() throws IOException {
        return new MasterAnswers("master", Map.of(
            MasterAnswers.command("get nodes", KubeFields.NODES), ok(KubectlPrints.fields(KubeFields.NODES, GpuUsageTest.fixture("nodes.json"))),
            MasterAnswers.command("get jobs -n default", KubeFields.JOBS), ok(KubectlPrints.fields(KubeFields.JOBS,
                "{\"items\": [{\"metadata\": {\"name\": \"taken\"}, \"status\": {\"active\": 1}}]}"))));
    }

    /** The master's answers to the survey's two kubectl questions, from the recorded lists. */
    static Map<String, ExecResult> clusterAnswers(String podsJson) throws IOException {
        Map<String, ExecResult> m = new java.util.HashMap<>();
        m.put(GpuQuestions.NODES_KEY, ok(KubectlPrints.fields(KubeFields.NODES, GpuUsageTest.fixture("nodes.json"))));
        m.put(GpuQuestions.PODS_KEY, ok(KubectlPrints.fields(KubeFields.GPU_PODS, podsJson)));
        return m;
    }

    static final String UNREACHABLE = "worker-3: cannot connect to 172.16.10.102:22: connection refused.";

    @Test void everyGpuNodeIsAskedAndAFailingOneIsALineNotAnError() throws IOException {
        Map<String, ExecResult> answers = clusterAnswers(GpuUsageTest.fixture("pods.json"));
        answers.put(GpuQuestions.smiKey("worker-1"), ok("0, NVIDIA H200, GPU-1, 143771, 580.159.04, Disabled, Default, 00000000:01:00.0\n"
            + "1, NVIDIA H200, GPU-2, 143771, 580.159.04, Disabled, Default, 00000000:02:00.0\n"));
        answers.put(GpuQuestions.smiKey("worker-2"), new ExecResult(9, "NVIDIA-SMI has failed because it"
            + " couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", ""));
        GpuUsage.Report r = GpuSurvey.of(EXAMPLE, k -> Optional.ofNullable(answers.get(k)), Map.of("worker-3", UNREACHABLE), Duration.ZERO).usage();
        assertEquals(List.of("worker-1", "worker-2", "worker-3"), r.nodes().stream().map(GpuUsage.NodeGpus::name).toList());
        assertEquals(2, r.nodes().get(0).gpus().size());
        assertTrue(r.nodes().get(1).problem().startsWith("nvidia-smi cannot reach the NVIDIA driver"), r.nodes().get(1).problem());
        assertTrue(r.nodes().get(1).reachable());
        assertFalse(r.nodes().get(2).reachable());
        assertEquals(UNREACHABLE, r.nodes().get(2).problem());
        assertEquals(3, r.nodes().get(1).allocated());
    }

    @Test void withAWindowEachGpuNodesSamplesAreMatchedToThePodsHoldingItsGpus() throws IOException {
        String pods = "{\"items\": [{\"metadata\": {\"namespace\": \"team-a\", \"name\": \"train-x7k2p\", \"uid\": \"5e0b4b1e-7a4c-4d52-9d7e-1f3c2a9b8c01\"},"
            + " \"spec\": {\"nodeName\": \"worker-1\", \"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}]},"
            + " \"status\": {\"phase\": \"Running\"}}]}";
        Map<String, ExecResult> answers = clusterAnswers(pods);
        String checkpoint = java.nio.file.Files.readString(Path.of("src/test/resources/kubelet/kubelet_internal_checkpoint-two-pods.json"));
        String samples = java.nio.file.Files.readString(Path.of("src/test/resources/h200/health/held-idle-lms500.csv"));
        answers.put(GpuQuestions.smiKey("worker-1"), ok("0, NVIDIA H200, GPU-01bc1429-cdbb-796f-97d8-790afa7693b9, 143771, 580.159.04, Disabled, Default, 00000000:01:00.0\n"));
        answers.put(GpuQuestions.checkpointKey("worker-1"), ok(checkpoint));
        answers.put(GpuQuestions.samplesKey("worker-1"), new ExecResult(124, samples, ""));
        ExecResult noDriver = new ExecResult(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
            + " Make sure that the latest NVIDIA driver is installed and running.\n", "");
        answers.put(GpuQuestions.smiKey("worker-2"), noDriver);
        answers.put(GpuQuestions.checkpointKey("worker-2"), ok(""));
        answers.put(GpuQuestions.samplesKey("worker-2"), noDriver);
        GpuSurvey.Survey s = GpuSurvey.of(EXAMPLE, k -> Optional.ofNullable(answers.get(k)), Map.of("worker-3", UNREACHABLE), Duration.ofMillis(2500));
        GpuActivity.Report a = s.activity().orElseThrow();
        assertEquals(List.of("worker-1", "worker-2", "worker-3"), a.nodes().stream().map(GpuActivity.NodeUse::node).toList());
        GpuActivity.GpuUse g = a.nodes().get(0).gpus().get(0);
        assertTrue(g.idle(), g::toString);
        assertEquals(List.of(new GpuActivity.PodRef("team-a", "train-x7k2p")), g.pods());
        assertEquals(List.of(g), a.idle());
        assertTrue(a.nodes().get(1).problem().startsWith("sampling failed (exit 9)"), a.nodes().get(1).problem());
        assertTrue(a.nodes().get(2).problem().contains("cannot connect"), a.nodes().get(2).problem());
        assertEquals(1, s.usage().nodes().get(0).gpus().size());
        answers.put(GpuQuestions.samplesKey("worker-2"), new ExecResult(127, "sh: 1: nvidia-smi: not found\n", ""));
        assertEquals("nvidia-smi is not installed on worker-2", GpuSurvey.of(EXAMPLE, k -> Optional.ofNullable(answers.get(k)),
            Map.of(), Duration.ofMillis(2500)).activity().orElseThrow().nodes().get(1).problem());
        // no window: nothing sampled
        assertTrue(GpuSurvey.of(EXAMPLE, k -> Optional.ofNullable(answers.get(k)), Map.of(), Duration.ZERO).activity().isEmpty());
    }

    @Test void kubectlFailingOnTheMasterNamesHostCommandExitAndStderr() {
        Map<String, ExecResult> answers = Map.of(GpuQuestions.NODES_KEY, new ExecResult(1, "",
            "The connection to the server 172.16.10.90:6443 was refused - did you specify the right host or port?\n"));
        WorkloadException e = assertThrows(WorkloadException.class,
            () -> GpuSurvey.of(EXAMPLE, k -> Optional.ofNullable(answers.get(k)), Map.of(), Duration.ZERO));
        assertEquals("master: `kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes " + KubeFields.NODES.outputFlag() + "` failed (exit 1):\n"
            + "  The connection to the server 172.16.10.90:6443 was refused - did you specify the right host or port?\n"
            + "Is the cluster up? Check it with: gpuctl verify", e.getMessage());
        assertFalse(e.refused());
        WorkloadException down = assertThrows(WorkloadException.class,
            () -> GpuSurvey.of(EXAMPLE, k -> Optional.empty(), Map.of("master", "master: cannot connect to 172.16.10.90:22: timed out."), Duration.ZERO));
        assertEquals("master: cannot connect to 172.16.10.90:22: timed out.", down.getMessage());
    }

    @Test void submitChecksAJobThatFitsAndIsNew() throws IOException {
        JobSpec spec = JobSpecLoader.load(Path.of("src/test/resources/jobs/detector-train.yaml"), EXAMPLE);
        assertEquals(java.util.Set.copyOf(JobSubmit.checkAsks(spec)), master().byCommand().keySet(), "it reads what it asks");
        JobSubmit.check(spec, master());
        WorkloadException unasked = assertThrows(WorkloadException.class, () -> JobSubmit.check(spec, new MasterAnswers("master", Map.of())));
        assertFalse(unasked.refused());
        assertTrue(unasked.getMessage().startsWith("master: `kubectl --kubeconfig=/etc/kubernetes/admin.conf get nodes "), unasked.getMessage());
    }

    @Test void submitRefusesAJobThatCanNeverRunOrWhoseNameIsTaken() throws IOException {
        JobSpec tooBig = JobSpecLoader.parse("big.yaml", "{name: big, image: t, gpus: 5}", EXAMPLE);
        WorkloadException e = assertThrows(WorkloadException.class, () -> JobSubmit.check(tooBig, master()));
        assertTrue(e.refused());
        assertTrue(e.getMessage().startsWith("big.yaml:1:29: gpus: 5 is more than any node has: the largest, worker-2, has 4 GPUs"),
            e.getMessage());
        JobSpec taken = JobSpecLoader.parse("t.yaml", "{name: taken, image: t, gpus: 1}", EXAMPLE);
        e = assertThrows(WorkloadException.class, () -> JobSubmit.check(taken, master()));
        assertTrue(e.refused());
        assertTrue(e.getMessage().startsWith("job default/taken already exists (running, 1 active)"), e.getMessage());
    }
}
