package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** cluster.gpuSharing and nodes[].gpuSharing: read, the node's own wins, each mistake at its FILE:LINE:COLUMN. */
class GpuSharingInventoryTest {
    static Inventory parse(String cluster, String w2) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\"" + cluster + " }\n"
            + "nodes:\n"
            + "  - { name: m, address: 10.0.0.1, role: master }\n"
            + "  - { name: w1, address: 10.0.0.2, role: worker }\n"
            + "  - { name: w2, address: 10.0.0.3, role: worker" + w2 + " }\n", Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static List<String> errors(String cluster, String w2) {
        InventoryException e = assertThrows(InventoryException.class, () -> parse(cluster, w2));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    @Test void noSharingUnlessAsked() {
        Inventory inv = parse("", "");
        assertFalse(inv.sharesGpus());
        assertEquals(GpuSharing.NONE, inv.sharing(inv.node("w1").orElseThrow()));
    }

    @Test void theClusterSettingAppliesToEveryGpuNodeAndANodeOwnWins() {
        Inventory inv = parse(", gpuSharing: { mode: time-slicing, replicas: 4 }", ", gpuSharing: { mode: mps, replicas: 2 }");
        assertTrue(inv.sharesGpus());
        assertEquals(new GpuSharing(GpuSharing.Mode.TIME_SLICING, 4), inv.sharing(inv.node("w1").orElseThrow()));
        assertEquals(new GpuSharing(GpuSharing.Mode.MPS, 2), inv.sharing(inv.node("w2").orElseThrow()));
        assertEquals(GpuSharing.NONE, inv.sharing(inv.master()), "the master has no GPUs to share");
        assertEquals("mps-2", inv.sharing(inv.node("w2").orElseThrow()).configName());
        Inventory one = parse("", ", gpuSharing: { mode: none }");
        assertFalse(one.sharesGpus());
    }

    @Test void mistakes() {
        assertEquals(List.of("inv.yaml:1:68: cluster.gpuSharing.mode: unknown sharing mode 'mig' (expected one of: none, time-slicing, mps)"),
            errors(", gpuSharing: { mode: mig }", ""));
        assertEquals(List.of("inv.yaml:5:94: nodes[2].gpuSharing.replicas: '1' is not a replica count (expected a whole number 2..48:"
            + " each GPU is advertised that many times; MPS serves at most 48 clients per GPU)"), errors("", ", gpuSharing: { mode: time-slicing, replicas: 1 }"));
        assertTrue(errors("", ", gpuSharing: { mode: mps }").get(0).contains("missing required key 'replicas' in nodes[2].gpuSharing"
            + " (expected how many pods may share each GPU, 2..48)"));
        assertTrue(errors("", ", gpuSharing: { mode: none, replicas: 3 }").get(0).contains("replicas is only for mode time-slicing or mps"));
        assertTrue(errors("", ", gpuSharing: { mode: mps, replicas: lots }").get(0).contains("'lots' is not a replica count"));
        assertTrue(errors("", ", gpu: false, gpuSharing: { mode: mps, replicas: 2 }").get(0)
            .contains("nodes[2].gpuSharing: node has no GPUs (gpu: false), so it has nothing to share"));
        assertTrue(errors(", gpuSharing: { replicas: 2 }", "").get(0).contains("missing required key 'mode' in cluster.gpuSharing"));
    }
}
