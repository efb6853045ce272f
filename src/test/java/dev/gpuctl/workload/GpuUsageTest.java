package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.gpu.NvidiaSmi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** kubectl's nodes and pods JSON (src/test/resources/kubectl) and nvidia-smi answers folded into who holds which GPU. */
class GpuUsageTest {
    static final Instant NOW = Instant.parse("2026-12-02T10:01:13Z");

    static String fixture(String name) throws IOException {
        return Files.readString(Path.of("src/test/resources/kubectl", name));
    }

    /** nvidia-smi --query-gpu=QUERY_FIELDS --format=csv,noheader,nounits for n GPUs of one model. */
    static NvidiaSmi.GpuScan smi(String model, int n) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < n; i++) {
            out.append(i).append(", ").append(model).append(", GPU-0000000").append(i)
                .append("-aaaa-bbbb-cccc-dddddddddddd, 143771, 580.159.04, Disabled, Default, 00000000:0").append(i).append(":00.0\n");
        }
        return NvidiaSmi.parseQuery(out.toString());
    }

    static GpuUsage.Report report() throws IOException {
        return GpuUsage.of(List.of("worker-1", "worker-2", "worker-3"), fixture("nodes.json"), fixture("pods.json"), Map.of(
            "worker-1", GpuUsage.Smi.answered(smi("NVIDIA H200", 2)),
            "worker-2", GpuUsage.Smi.answered(smi("NVIDIA H200", 4)),
            "worker-3", GpuUsage.Smi.failed("worker-3: cannot connect to 172.16.10.102:22: connection refused", false)));
    }

    @Test void podsBoundAndNotFinishedHoldTheirGpusOnTheirNode() throws IOException {
        GpuUsage.Report r = report();
        assertEquals(List.of("worker-1", "worker-2", "worker-3"), r.nodes().stream().map(GpuUsage.NodeGpus::name).toList());
        GpuUsage.NodeGpus w1 = r.nodes().get(0);
        GpuUsage.NodeGpus w2 = r.nodes().get(1);
        // the Succeeded pod on worker-1 holds nothing any more; the device plugin asks for no GPU
        assertEquals(List.of(), w1.pods());
        assertEquals(2, w1.allocatable());
        assertEquals(2, w1.free());
        // a Running job pod (2) and a Pending pod bound to the node (requests only; init container 1) count
        assertEquals(3, w2.allocated());
        assertEquals(1, w2.free());
        GpuUsage.PodGpus train = w2.pods().get(0);
        assertEquals("default/detector-train-x7k2p", train.namespace() + "/" + train.name());
        assertEquals("detector-train", train.job());
        assertEquals(2, train.gpus());
        assertEquals(Duration.ofSeconds(192), train.age(NOW).orElseThrow());
        assertEquals("", w2.pods().get(1).job());
        assertEquals(1, w2.pods().get(1).gpus());
        assertEquals("NVIDIA H200", w2.model());
        GpuUsage.NodeGpus w3 = r.nodes().get(2);
        assertFalse(w3.reachable());
        assertTrue(w3.inCluster());
        assertEquals(0, w3.allocatable());
        assertEquals(List.of(w3), r.unreachable());
        assertEquals(1, r.waiting().size());
        assertEquals("huge", r.waiting().get(0).job());
        assertTrue(r.waiting().get(0).reason().startsWith("0/4 nodes are available"));
        assertEquals(6, r.gpus());
        assertEquals(6, r.allocatable());
        assertEquals(3, r.allocated());
        assertEquals(3, r.free());
    }

    @Test void table() throws IOException {
        assertEquals("""
            NODE      GPU MODEL    GPUS  ALLOCATABLE  ALLOCATED  FREE  PODS
            worker-1  NVIDIA H200  2     2            0          2     -
            worker-2  NVIDIA H200  4     4            3          1     default/detector-train-x7k2p (job detector-train, 2 GPUs, 3m12s)
                                                                       vision/eval-0 (1 GPU, Pending, 3h1m)
            worker-3  ?            ?     0            0          0     -
            TOTAL                  6     6            3          3

            worker-3: cannot connect to 172.16.10.102:22: connection refused

            waiting for GPUs:
              default/huge-8hvcd (job huge, 8 GPUs, Pending, 73s): 0/4 nodes are available: 1 node(s) had untolerated \
            taint {node-role.kubernetes.io/control-plane: }, 3 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are \
            available: 4 Preemption is not helpful for scheduling.
            """, GpusText.table(report(), NOW));
    }

    @Test void withTeamsEachPodShowsTheTeamWhoseQueueAdmittedIt() throws IOException {
        String table = GpusText.table(report(), NOW, Map.of("team-vision", "vision-team", "vision", "vision"));
        assertTrue(table.startsWith("NODE      GPU MODEL    GPUS  ALLOCATABLE  ALLOCATED  FREE  PODS"), table);
        assertTrue(table.contains("default/detector-train-x7k2p (job detector-train, 2 GPUs, 3m12s)  -\n"), table);
        assertTrue(table.contains("vision/eval-0 (1 GPU, Pending, 3h1m)                              vision\n"), table);
        ObjectMapper json = new ObjectMapper();
        JsonNode doc = json.readTree(json.writeValueAsString(GpusText.document("gpu-lab", report(), Optional.empty(), NOW,
            Map.of("vision", "vision"))));
        assertEquals("vision", doc.path("nodes").get(1).path("pods").get(1).path("team").asText());
        assertTrue(doc.path("nodes").get(1).path("pods").get(0).path("team").isNull());
        assertTrue(GpusText.table(report(), NOW).lines().findFirst().orElseThrow().endsWith("PODS"), "no teams: no TEAM column");
    }

    @Test void jsonDocument() throws IOException {
        ObjectMapper json = new ObjectMapper();
        JsonNode doc = json.readTree(json.writeValueAsString(GpusText.document("gpu-lab", report(), NOW)));
        assertEquals("gpuctl.gpus/v1", doc.path("schema").asText());
        assertEquals("gpu-lab", doc.path("cluster").asText());
        JsonNode w2 = doc.path("nodes").get(1);
        assertEquals("worker-2", w2.path("name").asText());
        assertEquals("NVIDIA H200", w2.path("model").asText());
        assertEquals(4, w2.path("gpus").asInt());
        assertEquals(3, w2.path("allocated").asInt());
        assertEquals(1, w2.path("free").asInt());
        assertEquals("detector-train", w2.path("pods").get(0).path("job").asText());
        assertEquals(192, w2.path("pods").get(0).path("ageSeconds").asInt());
        assertTrue(w2.path("pods").get(1).path("job").isNull());
        JsonNode w3 = doc.path("nodes").get(2);
        assertFalse(w3.path("reachable").asBoolean());
        assertTrue(w3.path("gpus").isNull(), "an unknown count is null, not 0");
        assertTrue(w3.path("error").asText().contains("connection refused"));
        assertEquals(8, doc.path("waiting").get(0).path("gpus").asInt());
        assertEquals(3, doc.path("total").path("free").asInt());
        // job render reads the counts back from this very document
        KnownGpus.Seen seen = KnownGpus.parse(json.writeValueAsString(GpusText.document("gpu-lab", report(), NOW))).orElseThrow();
        assertEquals(Map.of("worker-1", 2, "worker-2", 4, "worker-3", 0), seen.gpus());
        assertEquals(NOW.toString(), seen.time());
        assertTrue(KnownGpus.parse("{\"schema\": \"gpuctl.verify/v1\"}").isEmpty());
        assertTrue(KnownGpus.parse("not json").isEmpty());
    }

    @Test void mixedModelsAndGpuNodesThatDidNotJoin() throws IOException {
        NvidiaSmi.GpuScan mixed = NvidiaSmi.parseQuery(
            "0, NVIDIA H200, GPU-1, 143771, 580.159.04, Disabled, Default, 00000000:01:00.0\n"
                + "1, NVIDIA H200, GPU-2, 143771, 580.159.04, Disabled, Default, 00000000:02:00.0\n"
                + "2, NVIDIA A100-SXM4-80GB, GPU-3, 81920, 580.159.04, Disabled, Default, 00000000:03:00.0\n");
        GpuUsage.Report r = GpuUsage.of(List.of("worker-9"), fixture("nodes.json"), "{\"items\": []}",
            Map.of("worker-9", GpuUsage.Smi.answered(mixed)));
        assertEquals("2x NVIDIA H200 + 1x NVIDIA A100-SXM4-80GB", r.nodes().get(0).model());
        assertFalse(r.nodes().get(0).inCluster());
        // cluster nodes that offer GPUs are listed even when the inventory does not name them
        assertEquals(List.of("worker-9", "worker-1", "worker-2"), r.nodes().stream().map(GpuUsage.NodeGpus::name).toList());
        assertTrue(GpusText.table(r, NOW).contains("worker-9: not a node of the cluster"), GpusText.table(r, NOW));
    }

    @Test void kubectlOutputThatIsNotAListIsAnError() {
        var e = assertThrows(IllegalArgumentException.class, () -> GpuUsage.of(List.of(), "error: You must be logged in", "{}", Map.of()));
        assertTrue(e.getMessage().contains("kubectl get nodes -o json printed no JSON: error: You must be logged in"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GpuUsage.of(List.of(), "{\"items\": []}", "{\"kind\": \"Status\"}", Map.of()));
        assertTrue(e.getMessage().contains("get pods -o json printed no list"), e.getMessage());
    }

    @Test void allocatableAndJobStatus() throws IOException {
        assertEquals(Map.of("master", 0, "worker-1", 2, "worker-2", 4, "worker-3", 0), GpuUsage.allocatable(fixture("nodes.json")));
        String jobs = """
            {"items": [
              {"metadata": {"name": "a"}, "status": {"active": 1}},
              {"metadata": {"name": "b"}, "status": {"conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                                                                    {"type": "Complete", "status": "True"}]}}]}""";
        assertEquals("running, 1 active", GpuUsage.jobStatus(jobs, "a").orElseThrow());
        assertEquals("Complete", GpuUsage.jobStatus(jobs, "b").orElseThrow());
        assertTrue(GpuUsage.jobStatus(jobs, "c").isEmpty());
    }

    @Test void agesAsKubectlWritesThem() {
        assertEquals("0s", GpuUsage.age(Duration.ofSeconds(-3)));
        assertEquals("119s", GpuUsage.age(Duration.ofSeconds(119)));
        assertEquals("2m", GpuUsage.age(Duration.ofSeconds(120)));
        assertEquals("9m59s", GpuUsage.age(Duration.ofSeconds(599)));
        assertEquals("179m", GpuUsage.age(Duration.ofMinutes(179)));
        assertEquals("3h", GpuUsage.age(Duration.ofHours(3)));
        assertEquals("7h59m", GpuUsage.age(Duration.ofMinutes(479)));
        assertEquals("47h", GpuUsage.age(Duration.ofHours(47)));
        assertEquals("3d4h", GpuUsage.age(Duration.ofHours(76)));
        assertEquals("400d", GpuUsage.age(Duration.ofDays(400)));
        assertEquals("3y5d", GpuUsage.age(Duration.ofDays(3 * 365 + 5)));
    }
}
