package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * MIG devices with the device plugin's MIG strategy mixed: a node offers nvidia.com/mig-PROFILE instead of
 * nvidia.com/gpu, pods ask for those; gpus counts them per resource, beside the whole GPUs.
 */
class GpuUsageMigTest {
    static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");

    static final String NODES = """
        {"items": [
          {"metadata": {"name": "w1"}, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "0",
             "nvidia.com/mig-1g.18gb": "2", "nvidia.com/mig-2g.35gb": "1", "nvidia.com/mig-3g.71gb": "1"}}},
          {"metadata": {"name": "w2"}, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "2"}}}
        ]}""";

    static String pod(String name, String node, String phase, String resources, String init) {
        return """
            {"metadata": {"namespace": "team", "name": "%s", "ownerReferences": [{"kind": "Job", "name": "%s"}]},
             "spec": {"nodeName": "%s", "containers": [{"name": "c", "resources": %s}]%s},
             "status": {"phase": "%s", "startTime": "2026-12-04T09:59:00Z"}}""".formatted(name, name, node, resources,
            init.isEmpty() ? "" : ", \"initContainers\": [{\"name\": \"i\", \"resources\": " + init + "}]", phase);
    }

    static final String PODS = "{\"items\": [" + String.join(",",
        // a limit counts; two 1g.18gb devices asked by the container
        pod("small", "w1", "Running", "{\"limits\": {\"nvidia.com/mig-1g.18gb\": \"2\"}}", ""),
        // requests only, and an init container asking for more than the container: the init container's count holds
        pod("mid", "w1", "Pending", "{\"requests\": {\"nvidia.com/mig-2g.35gb\": 1}}", "{\"limits\": {\"nvidia.com/mig-3g.71gb\": \"1\"}}"),
        // finished: holds nothing any more
        pod("done", "w1", "Succeeded", "{\"limits\": {\"nvidia.com/mig-3g.71gb\": \"1\"}}", ""),
        // not bound: waits
        pod("waits", "", "Pending", "{\"limits\": {\"nvidia.com/mig-1g.18gb\": \"1\"}}", ""),
        // a whole-GPU pod on the other node, as before
        pod("whole", "w2", "Running", "{\"limits\": {\"nvidia.com/gpu\": \"1\"}}", "")) + "]}";

    static GpuUsage.Report report() {
        return GpuUsage.of(List.of("w1", "w2"), NODES, PODS, Map.of());
    }

    @Test void aMixedMigNodeCountsEachProfileItOffersAndItsPodsHold() {
        GpuUsage.NodeGpus w1 = report().nodes().get(0);
        assertEquals(0, w1.allocatable());
        assertEquals(0, w1.allocated());
        assertEquals(List.of(
            new GpuUsage.MigDevices("nvidia.com/mig-1g.18gb", 2, 2),
            new GpuUsage.MigDevices("nvidia.com/mig-2g.35gb", 1, 1),
            new GpuUsage.MigDevices("nvidia.com/mig-3g.71gb", 1, 1)), w1.mig());
        assertEquals(List.of("small", "mid"), w1.pods().stream().map(GpuUsage.PodGpus::name).sorted(java.util.Comparator.reverseOrder()).toList());
        GpuUsage.PodGpus mid = w1.pods().stream().filter(p -> p.name().equals("mid")).findFirst().orElseThrow();
        assertEquals(Map.of("nvidia.com/mig-2g.35gb", 1, "nvidia.com/mig-3g.71gb", 1), mid.mig());
        assertEquals(0, w1.mig().get(0).free());
        assertEquals("1g.18gb", w1.mig().get(0).profile());
    }

    @Test void wholeGpuNodesAndWaitingMigPodsAreAsBefore() {
        GpuUsage.Report r = report();
        GpuUsage.NodeGpus w2 = r.nodes().get(1);
        assertEquals(List.of(), w2.mig());
        assertEquals(1, w2.allocated());
        assertEquals(List.of("waits"), r.waiting().stream().map(GpuUsage.PodGpus::name).toList());
        assertEquals(Map.of("nvidia.com/mig-1g.18gb", 1), r.waiting().get(0).mig());
    }

    @Test void theTableShowsAMigLinePerProfileAndPodsByTheirMigDevices() {
        String table = GpusText.table(report(), NOW);
        assertTrue(table.contains("team/small (job small, 2 MIG 1g.18gb, 60s)"), table);
        assertTrue(table.contains("team/mid (job mid, 1 MIG 2g.35gb, 1 MIG 3g.71gb, Pending, 60s)"), table);
        assertTrue(table.lines().anyMatch(l -> l.matches("\\s+MIG 1g\\.18gb\\s+2\\s+2\\s+0")), table);
        assertTrue(table.contains("team/whole (job whole, 1 GPU, 60s)"), table);
    }

    @Test void theJsonCarriesMigPerNodeAndPerPod() throws Exception {
        var doc = new ObjectMapper().valueToTree(GpusText.document("lab", report(), NOW));
        var w1 = doc.path("nodes").get(0);
        assertEquals("nvidia.com/mig-1g.18gb", w1.path("mig").get(0).path("resource").asText());
        assertEquals(2, w1.path("mig").get(0).path("allocated").asInt());
        assertEquals(0, w1.path("mig").get(0).path("free").asInt());
        assertEquals(2, w1.path("pods").get(0).path("mig").path("nvidia.com/mig-1g.18gb").asInt(0)
            + w1.path("pods").get(1).path("mig").path("nvidia.com/mig-1g.18gb").asInt(0));
        assertEquals(0, doc.path("nodes").get(1).path("mig").size());
        assertEquals(1, doc.path("waiting").get(0).path("mig").path("nvidia.com/mig-1g.18gb").asInt());
    }
}
