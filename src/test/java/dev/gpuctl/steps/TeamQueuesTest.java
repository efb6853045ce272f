package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpuctl.kube.KueueObjects;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The teams' Kueue objects, checked field by field against Kueue's v1beta1 API (shared facts kueue.md §2: ResourceFlavor
 * spec.nodeLabels; ClusterQueue spec.cohort, namespaceSelector, queueingStrategy, resourceGroups[].coveredResources and
 * flavors[].resources[] {name, nominalQuota, borrowingLimit}, preemption; LocalQueue spec.clusterQueue).
 */
class TeamQueuesTest {
    static Inventory parse(String w1, String w2, String teams) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: lab, kubernetesVersion: \"1.35\" }\n"
            + "nodes:\n"
            + "  - { name: m, address: 10.0.0.1, role: master }\n"
            + "  - { name: w1, address: 10.0.0.2, role: worker" + w1 + " }\n"
            + "  - { name: w2, address: 10.0.0.3, role: worker" + w2 + " }\n"
            + teams, Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static JsonNode find(List<ObjectNode> objects, String kind, String name) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind) && o.path("metadata").path("name").asText().equals(name))
            .findFirst().orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in " + objects));
    }

    @Test void oneUnnamedModelTwoTeams() {
        Inventory inv = parse(", gpus: 2", ", gpus: 2", "teams:\n  - { name: a, gpus: 2 }\n  - { name: b, gpus: 2, borrowing: 1 }\n");
        List<ObjectNode> objects = TeamQueues.objects(inv);
        assertEquals(List.of("ResourceFlavor/gpu", "ResourceFlavor/cpu-memory", "Namespace/team-a", "ClusterQueue/a", "LocalQueue/a",
            "Namespace/team-b", "ClusterQueue/b", "LocalQueue/b"),
            objects.stream().map(o -> o.path("kind").asText() + "/" + o.path("metadata").path("name").asText()).toList());
        JsonNode gpu = find(objects, "ResourceFlavor", "gpu");
        assertEquals("kueue.x-k8s.io/v1beta1", gpu.path("apiVersion").asText());
        assertFalse(gpu.path("spec").has("nodeLabels"), "one unnamed model: every GPU node");

        JsonNode a = find(objects, "ClusterQueue", "a").path("spec");
        assertEquals("lab", a.path("cohort").asText());
        assertEquals("team-a", a.path("namespaceSelector").path("matchLabels").path("kubernetes.io/metadata.name").asText());
        assertEquals("BestEffortFIFO", a.path("queueingStrategy").asText());
        JsonNode gpus = a.path("resourceGroups").get(0);
        assertEquals("[\"nvidia.com/gpu\"]", gpus.path("coveredResources").toString());
        JsonNode res = gpus.path("flavors").get(0);
        assertEquals("gpu", res.path("name").asText());
        assertEquals("nvidia.com/gpu", res.path("resources").get(0).path("name").asText());
        assertEquals(2, res.path("resources").get(0).path("nominalQuota").asInt());
        assertFalse(res.path("resources").get(0).has("borrowingLimit"), "borrowing: true is Kueue's nil: any idle GPU");
        JsonNode cm = a.path("resourceGroups").get(1);
        assertEquals("[\"cpu\",\"memory\"]", cm.path("coveredResources").toString());
        assertEquals(List.of("cpu", "memory"), cm.path("flavors").get(0).path("resources").findValuesAsText("name"),
            "resources in coveredResources' order, as Kueue's webhook requires");
        assertEquals("Any", a.path("preemption").path("reclaimWithinCohort").asText());
        assertEquals("Never", a.path("preemption").path("withinClusterQueue").asText());
        assertEquals("LowerPriority", a.path("preemption").path("borrowWithinCohort").path("policy").asText());

        JsonNode b = find(objects, "ClusterQueue", "b").path("spec");
        assertEquals(1, b.path("resourceGroups").get(0).path("flavors").get(0).path("resources").get(0).path("borrowingLimit").asInt());
        JsonNode lq = find(objects, "LocalQueue", "b");
        assertEquals("team-b", lq.path("metadata").path("namespace").asText());
        assertEquals("b", lq.path("spec").path("clusterQueue").asText());
        assertEquals("b", find(objects, "Namespace", "team-b").path("metadata").path("labels").path(KueueObjects.TEAM_LABEL).asText());
    }

    @Test void aFlavorPerModelAndEveryTeamListsEveryFlavor() {
        Inventory inv = parse(", gpus: 8, gpuModel: h200", ", gpus: 4, gpuModel: a100",
            "teams:\n  - { name: a, gpus: { h200: 6 }, borrowing: false }\n  - { name: b, gpus: { h200: 2, a100: 4 } }\n");
        List<ObjectNode> objects = TeamQueues.objects(inv);
        assertEquals("{\"gpuctl.dev/gpu-model\":\"h200\"}", find(objects, "ResourceFlavor", "h200").path("spec").path("nodeLabels").toString());
        JsonNode flavors = find(objects, "ClusterQueue", "a").path("spec").path("resourceGroups").get(0).path("flavors");
        assertEquals(List.of("a100", "h200"), flavors.findValuesAsText("name").stream().filter(n -> !n.equals("nvidia.com/gpu")).toList());
        assertEquals(0, flavors.get(0).path("resources").get(0).path("nominalQuota").asInt(), "no a100 of its own");
        assertEquals(0, flavors.get(0).path("resources").get(0).path("borrowingLimit").asInt(), "borrowing: false");
        assertEquals(6, flavors.get(1).path("resources").get(0).path("nominalQuota").asInt());
        assertEquals("h200", GpuStep.labels(inv, inv.node("w1").orElseThrow()).get(KueueObjects.MODEL_LABEL),
            "the node carries the label its flavor selects");
        assertFalse(GpuStep.labels(inv, inv.master()).containsKey(KueueObjects.MODEL_LABEL));
    }

    @Test void noTeamsNoObjects() {
        assertTrue(TeamQueues.objects(parse("", "", "")).isEmpty());
    }
}
