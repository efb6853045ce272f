package dev.gpuctl.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** teams: read with the nodes' GPU counts and models; each mistake at its FILE:LINE:COLUMN. */
class TeamsInventoryTest {
    static Inventory parse(String w1, String w2, String teams) {
        return InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\" }\n"
            + "nodes:\n"
            + "  - { name: m, address: 10.0.0.1, role: master }\n"
            + "  - { name: w1, address: 10.0.0.2, role: worker" + w1 + " }\n"
            + "  - { name: w2, address: 10.0.0.3, role: worker" + w2 + " }\n"
            + teams, Path.of("/tmp"), Map.of("HOME", "/root"));
    }

    static List<String> errors(String w1, String w2, String teams) {
        InventoryException e = assertThrows(InventoryException.class, () -> parse(w1, w2, teams));
        return e.errors().stream().map(InventoryError::format).toList();
    }

    @Test void noTeamsUnlessAsked() {
        Inventory inv = parse("", "", "");
        assertTrue(inv.teams().isEmpty());
        assertEquals(List.of(Team.DEFAULT_MODEL), inv.gpuModels());
    }

    @Test void oneModel() {
        Inventory inv = parse(", gpus: 2", ", gpus: 2", "teams:\n"
            + "  - { name: vision, gpus: 2, members: [alice, bob] }\n"
            + "  - { name: nlp, gpus: 2, borrowing: false }\n"
            + "  - { name: ops, gpus: 0, borrowing: 1 }\n");
        assertEquals(3, inv.teams().size());
        Team vision = inv.team("vision").orElseThrow();
        assertEquals(Map.of(Team.DEFAULT_MODEL, 2), vision.gpus());
        assertEquals(List.of("alice", "bob"), vision.members());
        assertEquals(OptionalInt.empty(), vision.borrowingLimit());
        assertTrue(vision.mayBorrow());
        assertEquals("team-vision", vision.namespace());
        assertEquals(OptionalInt.of(0), inv.team("nlp").orElseThrow().borrowingLimit());
        assertFalse(inv.team("nlp").orElseThrow().mayBorrow());
        assertEquals(OptionalInt.of(1), inv.team("ops").orElseThrow().borrowingLimit());
        assertEquals("vision", inv.teamOf("bob").orElseThrow().name());
        assertTrue(inv.teamOf("carol").isEmpty());
        assertFalse(inv.namesGpuModels());
    }

    @Test void perModel() {
        Inventory inv = parse(", gpus: 8, gpuModel: h200", ", gpus: 4, gpuModel: a100", "teams:\n"
            + "  - { name: vision, gpus: { h200: 8, a100: 1 } }\n"
            + "  - { name: nlp, gpus: { a100: 4 } }\n");
        assertEquals(List.of("a100", "h200"), inv.gpuModels());
        assertTrue(inv.namesGpuModels());
        assertEquals(8, inv.team("vision").orElseThrow().quota("h200"));
        assertEquals(0, inv.team("nlp").orElseThrow().quota("h200"));
        assertEquals("h200", Inventory.gpuModel(inv.node("w1").orElseThrow()));
    }

    @Test void sharingMultipliesTheGpusAQuotaMayUse() {
        Inventory inv = InventoryLoader.parse("inv.yaml", "cluster: { name: c, kubernetesVersion: \"1.35\","
            + " gpuSharing: { mode: time-slicing, replicas: 4 } }\n"
            + "nodes:\n  - { name: m, address: 10.0.0.1, role: master }\n  - { name: w1, address: 10.0.0.2, role: worker, gpus: 2 }\n"
            + "teams:\n  - { name: vision, gpus: 8 }\n", Path.of("/tmp"), Map.of("HOME", "/root"));
        assertEquals(8, inv.team("vision").orElseThrow().quota(Team.DEFAULT_MODEL));
    }

    @Test void aQuotaAboveTheClustersGpus() {
        assertEquals(List.of("inv.yaml:7:27: teams[0].gpus: team 'vision' gets 5 GPUs, above the cluster's 4 (expected at most 4:"
            + " the GPU nodes' gpus, times their sharing replicas)"),
            errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: vision, gpus: 5 }\n"));
        assertEquals(List.of("inv.yaml:7:35: teams[0].gpus.h200: team 'vision' gets 3 GPUs of model h200, above the cluster's 2"
            + " (expected at most 2: the GPU nodes' gpus of that model, times their sharing replicas)"),
            errors(", gpus: 2, gpuModel: h200", ", gpus: 2, gpuModel: a100", "teams:\n  - { name: vision, gpus: { h200: 3 } }\n"));
    }

    @Test void anUnknownModel() {
        assertEquals(List.of("inv.yaml:7:29: teams[0].gpus: no GPU node has model 'b200' (expected one of: a100, h200; a node's model"
            + " is its gpuModel)"),
            errors(", gpus: 2, gpuModel: h200", ", gpus: 2, gpuModel: a100", "teams:\n  - { name: vision, gpus: { b200: 1 } }\n"));
        assertTrue(errors(", gpus: 2, gpuModel: h200", ", gpus: 2, gpuModel: a100", "teams:\n  - { name: vision, gpus: 1 }\n").get(0)
            .startsWith("inv.yaml:7:27: teams[0].gpus: the cluster has several GPU models (a100, h200), so the quota is per model"));
    }

    @Test void duplicateNamesAndMembers() {
        assertEquals(List.of("inv.yaml:8:13: duplicate team name 'vision' (first at line 7)"),
            errors(", gpus: 2", ", gpus: 2", "teams:\n  - name: vision\n    gpus: 1\n  - name: vision\n    gpus: 1\n".replace(
                "  - name: vision\n    gpus: 1\n  - name: vision\n    gpus: 1\n", "  - { name: vision, gpus: 1 }\n  - { name: vision, gpus: 1 }\n")));
        assertEquals(List.of("inv.yaml:8:37: teams[1].members: 'alice' is already a member of team 'vision' (expected each person in"
            + " one team: job submit puts a person's jobs in their team's queue)"),
            errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: vision, gpus: 1, members: [alice] }\n  - { name: nlp, gpus: 1, members: [alice] }\n"));
    }

    @Test void nodesMustStateWhatQuotasAreCheckedAgainst() {
        assertEquals(List.of("inv.yaml:6:1: teams: GPU node 'w2' does not state its GPU count (expected gpus: N on every GPU node when"
            + " teams are set, so that quotas can be checked against the cluster's GPUs)"),
            errors(", gpus: 2", "", "teams:\n  - { name: vision, gpus: 1 }\n"));
        assertTrue(errors(", gpus: 2, gpuModel: h200", ", gpus: 2", "teams:\n  - { name: vision, gpus: { h200: 1 } }\n").get(0)
            .contains("GPU node 'w2' does not state its gpuModel while other nodes do"));
        assertEquals(List.of("inv.yaml:5:56: nodes[2].gpus: '0' is not a GPU count (expected a whole number 1..64: the GPUs nvidia-smi"
            + " lists on the node)"), errors("", ", gpus: 0", ""));
        assertTrue(errors("", ", gpuModel: H200", "").get(0).contains("nodes[2].gpuModel: 'H200' is not a GPU model name"));
        assertTrue(errors("", ", gpu: false, gpus: 2", "").get(0).contains("nodes[2].gpus: node has no GPUs (gpu: false)"));
    }

    @Test void otherMistakes() {
        assertTrue(errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: Vision, gpus: 1 }\n").get(0)
            .contains("teams[0].name: 'Vision' is not a valid team name"));
        assertTrue(errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: vision }\n").get(0)
            .contains("missing required key 'gpus' in teams[0]"));
        assertTrue(errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: vision, gpus: 1, borrowing: lots }\n").get(0)
            .contains("teams[0].borrowing: expected true (borrow any idle GPU of the other teams), false (never borrow) or the most"));
        assertTrue(errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: vision, gpus: 1, quota: 2 }\n").get(0)
            .contains("unknown key 'quota' in teams[0]"));
        assertTrue(errors(", gpus: 2", ", gpus: 2", "teams: []\n").get(0).contains("teams: the list is empty"));
        assertTrue(errors(", gpus: 2", ", gpus: 2", "teams:\n  - { name: vision, gpus: -1 }\n").get(0)
            .contains("teams[0].gpus: '-1' is not a GPU count"));
    }
}
