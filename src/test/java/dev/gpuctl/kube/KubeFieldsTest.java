package dev.gpuctl.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.workload.GpuUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fields a check asks kubectl for, and the -o json-shaped list they fold back into. */
class KubeFieldsTest {
    static final Path KUBECTL = Path.of("src/test/resources/kubectl");

    @Test void theJsonpathPrintsOneLinePerItemTabSeparated() {
        KubeFields.Query q = new KubeFields.Query(List.of("metadata.name", "spec.containers[*].resources"));
        assertEquals("{range .items[*]}{.metadata.name}{\"\\t\"}{.spec.containers[*].resources}{\"\\n\"}{end}", q.jsonpath());
        assertEquals("-o 'jsonpath=" + q.jsonpath() + "'", q.outputFlag());
        for (KubeFields.Query each : List.of(KubeFields.NODES, KubeFields.PODS, KubeFields.GPU_PODS, KubeFields.JOBS)) {
            assertFalse(each.jsonpath().contains("env") || each.jsonpath().contains("template") || each.jsonpath().contains("'"), each.jsonpath());
        }
    }

    @Test void theFieldsFoldBackIntoTheListTheyCameFrom() throws Exception {
        String out = "w1\t{\"team\":\"a\"}\t{\"nvidia.com/gpu\":\"2\"}\t[{\"type\":\"Ready\",\"status\":\"True\",\"message\":\"tab\\there\"}]\n"
            + "w2\t\t\t\n";
        var list = KubeFields.NODES.list(out);
        assertEquals("{\"items\":[{\"metadata\":{\"name\":\"w1\",\"labels\":{\"team\":\"a\"}},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"2\"},"
            + "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"message\":\"tab\\there\"}]}},{\"metadata\":{\"name\":\"w2\"}}]}", list.toString());
        assertEquals("{\"items\":[]}", KubeFields.PODS.list("").toString());
        var pods = new KubeFields.Query(List.of("metadata.name", "spec.containers[*].resources")).list("p\t{\"limits\":{\"nvidia.com/gpu\":\"1\"}} {}\n");
        assertEquals("[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}},{\"resources\":{}}]", pods.path("items").path(0).path("spec").path("containers").toString());
    }

    @Test void aLineThatIsNotTheQuerysIsAnErrorNamingIt() {
        var e = assertThrows(IllegalArgumentException.class, () -> KubeFields.NODES.list("error: You must be logged in to the server\n"));
        assertEquals("kubectl's line 1 has 1 fields, expected 4: error: You must be logged in to the server", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KubeFields.NODES.list("w1\t{broken\t\t\n"));
    }

    /** The GPU report read from the asked fields equals the one read from whole objects, and no env value is there. */
    @Test void theGpuReportNeedsNothingButTheseFields() throws Exception {
        String nodes = Files.readString(KUBECTL.resolve("nodes.json"));
        String pods = Files.readString(KUBECTL.resolve("pods.json"));
        String secret = "hunter2-in-env";
        var tree = (com.fasterxml.jackson.databind.node.ObjectNode) new ObjectMapper().readTree(pods);
        ((com.fasterxml.jackson.databind.node.ObjectNode) tree.path("items").path(0).path("spec").path("containers").path(0))
            .putArray("env").addObject().put("name", "PASSWORD").put("value", secret);
        pods = tree.toString();
        List<String> gpuNodes = List.of("worker-1", "worker-2", "worker-3");
        var whole = GpuUsage.of(gpuNodes, nodes, pods, Map.of());
        String nodeFields = KubeFields.NODES.json(KubectlPrints.fields(KubeFields.NODES, nodes));
        String podFields = KubeFields.PODS.json(KubectlPrints.fields(KubeFields.PODS, pods));
        assertEquals(whole, GpuUsage.of(gpuNodes, nodeFields, podFields, Map.of()));
        assertTrue(pods.contains(secret));
        assertFalse(KubectlPrints.fields(KubeFields.PODS, pods).contains(secret), "the asked fields hold no env value");
    }
}
