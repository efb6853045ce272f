package dev.gpuctl.inventory;

import dev.gpuctl.gpu.Mig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** gpuSharing.mig: read for the cluster and a node, each mistake at its FILE:LINE:COLUMN. */
class MigInventoryTest {
    static Inventory parse(String cluster, String w2) { return GpuSharingInventoryTest.parse(cluster, w2); }

    static List<String> errors(String cluster, String w2) { return GpuSharingInventoryTest.errors(cluster, w2); }

    @Test void singleAndMixed() {
        Inventory inv = parse(", gpuSharing: { mig: { strategy: single, profile: 1g.18gb } }",
            ", gpuSharing: { mode: none, mig: { strategy: mixed, profile: [3g.71gb, 1g.18gb, 1g.18gb] } }");
        assertTrue(inv.sharesGpus());
        GpuSharing w1 = inv.sharing(inv.node("w1").orElseThrow());
        assertEquals(Optional.of(new Mig(Mig.Strategy.SINGLE, List.of("1g.18gb"))), w1.mig());
        assertEquals("mig-single-1g.18gb", w1.configName());
        assertEquals("MIG single 1g.18gb", w1.toString());
        GpuSharing w2 = inv.sharing(inv.node("w2").orElseThrow());
        assertEquals("MIG mixed 3g.71gb + 2 × 1g.18gb", w2.toString());
        assertEquals("nvidia.com/mig-3g.71gb", w2.mig().orElseThrow().resource("3g.71gb"));
        assertEquals("mig-mixed-1x3g.71gb-2x1g.18gb", w2.configName(), "the layout is in the label: re-cut GPUs restart the plugin");
        GpuSharing many = GpuSharing.of(new dev.gpuctl.gpu.Mig(dev.gpuctl.gpu.Mig.Strategy.MIXED,
            List.of("1g.18gb", "1g.35gb", "1g.20gb", "1g.10gb", "1g.5gb", "1g.12gb", "1g.24gb")));
        assertTrue(many.configName().matches("mig-mixed-[0-9a-f]{12}"), "longer than a label value: " + many.configName());
        assertEquals(GpuSharing.NONE, inv.sharing(inv.master()));
        Inventory mixedOne = parse("", ", gpuSharing: { mig: { strategy: mixed, profile: 7g.141gb } }");
        assertEquals(List.of("7g.141gb"), mixedOne.sharing(mixedOne.node("w2").orElseThrow()).mig().orElseThrow().profiles());
    }

    @Test void mistakes() {
        assertEquals(List.of("inv.yaml:5:70: nodes[2].gpuSharing.mig: MIG and time-slicing on the same GPUs are not supported:"
                + " a MIG instance is already a GPU of its own, with its own memory (remove mode and replicas, or remove mig)"),
            errors("", ", gpuSharing: { mode: time-slicing, replicas: 2, mig: { strategy: single, profile: 1g.18gb } }"));
        assertEquals(List.of("inv.yaml:5:81: nodes[2].gpuSharing.mig.strategy: unknown MIG strategy 'auto' (expected one of: single, mixed)"),
            errors("", ", gpuSharing: { mig: { strategy: auto, profile: 1g.18gb } }"));
        assertEquals(List.of("inv.yaml:5:98: nodes[2].gpuSharing.mig.profile: '1g.18' is not a GPU instance profile name (expected"
                + " compute slices then memory, such as 1g.18gb or 3g.71gb, as nvidia-smi mig -lgip prints them after 'MIG ';"
                + " media-extension profiles (+me) are not supported)"),
            errors("", ", gpuSharing: { mig: { strategy: single, profile: 1g.18 } }"));
        assertTrue(errors("", ", gpuSharing: { mig: { strategy: single, profile: [1g.18gb, 2g.35gb] } }").get(0)
            .contains("strategy single takes one profile"));
        assertTrue(errors("", ", gpuSharing: { mig: { strategy: mixed, profile: [4g.71gb, 4g.71gb] } }").get(0)
            .contains("the profiles take 8 compute slices of a GPU, which has at most 7"));
        assertTrue(errors("", ", gpuSharing: { mig: { profile: 1g.18gb } }").get(0)
            .contains("missing required key 'strategy' in nodes[2].gpuSharing.mig"));
        assertTrue(errors("", ", gpuSharing: { mig: { strategy: mixed } }").get(0)
            .contains("missing required key 'profile' in nodes[2].gpuSharing.mig"));
        assertTrue(errors("", ", gpuSharing: { mig: { strategy: mixed, profile: [] } }").get(0).contains("the list is empty"));
        assertTrue(errors("", ", gpuSharing: { replicas: 3, mig: { strategy: single, profile: 1g.18gb } }").get(0)
            .contains("replicas is only for mode time-slicing or mps"));
        assertTrue(errors("", ", gpuSharing: { mig: { strategy: single, profile: 1g.18gb, count: 3 } }").get(0)
            .contains("count"));
        assertTrue(errors("", ", gpu: false, gpuSharing: { mig: { strategy: single, profile: 1g.18gb } }").get(0)
            .contains("node has no GPUs (gpu: false)"));
    }
}
