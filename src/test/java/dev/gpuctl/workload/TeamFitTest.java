package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Team;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** The per-node fit rule: a team's job needs its GPUs on one node, free of the other teams' quota. */
class TeamFitTest {
    static Team team(String name, Map<String, Integer> gpus) { return new Team(name, gpus, List.of(), OptionalInt.empty()); }

    static JobSpec job(int gpus) {
        return new JobSpec("train", "default", "pytorch", List.of(), gpus, "job.yaml:1:37", Map.of(), Optional.empty(), Optional.empty(),
            JobSpec.Pod.NONE);
    }

    @Test void aNodesGpusFreeOfTheOtherTeamsQuotaAreWhatTheirQuotaCannotTakeElsewhere() {
        Team a = team("a", Map.of("gpu", 2));
        Team b = team("b", Map.of("gpu", 10));
        TeamFit fit = new TeamFit(Map.of("gpu", Map.of("w1", 8, "w2", 4)), List.of(a, b));
        assertEquals(12, fit.cluster("gpu"));
        assertEquals(10, fit.others("gpu", a));
        assertEquals(2, fit.free("gpu", "w1", a), "b's 10 fill w2's 4 and 6 of w1's 8");
        assertEquals(2, fit.free("gpu", "w2", a));
        assertEquals(8, fit.free("gpu", "w1", b), "a's 2 fit on w2");
        assertEquals(4, fit.free("gpu", "w2", b));
        assertEquals(0, fit.free("gpu", "w9", a), "no such node");
        TeamFit over = new TeamFit(Map.of("gpu", Map.of("w1", 4)), List.of(team("a", Map.of("gpu", 4)), team("b", Map.of("gpu", 4))));
        assertEquals(0, over.free("gpu", "w1", over.teams().get(0)), "quotas above the cluster: nothing is free of the others'");
    }

    @Test void oneNodeSharedByTwoTeamsHoldsAJobOfOnlyItsOwnersShare() {
        Team a = team("a", Map.of("gpu", 4));
        TeamFit fit = new TeamFit(Map.of("gpu", Map.of("big", 8)), List.of(a, team("b", Map.of("gpu", 4))));
        assertEquals(8, fit.reach("gpu", a), "Kueue would admit 8: a's 4 and b's idle 4");
        assertEquals(Optional.empty(), fit.unfit(job(4), a));
        String refused = fit.unfit(job(8), a).orElseThrow();
        assertEquals("job.yaml:1:37: gpus: 8 is more than any node has free of the other teams' quota: the largest node, big, has"
            + " 8 GPUs; the other teams' quota (b: 4) is 4 of the cluster's 8, which leaves 4 for team a, so big has at most 4 GPUs"
            + " free of the other teams' quota. A pod runs on one node and Kueue admits on quota alone, so the job would run only"
            + " while the other teams leave their own GPUs idle (and be preempted when they take them back), else wait with its"
            + " quota held (expected at most 4, or split the work into jobs of at most 4 GPUs, or give team a more of the quota in"
            + " the inventory)", refused);
    }

    @Test void gpusNoTeamOwnsAreFreeOfTheOthersQuota() {
        Team a = team("a", Map.of("gpu", 2));
        TeamFit fit = new TeamFit(Map.of("gpu", Map.of("big", 8)), List.of(a, team("b", Map.of("gpu", 2))));
        assertEquals(6, fit.free("gpu", "big", a));
        assertEquals(Optional.empty(), fit.unfit(job(4), a), "a's 2 and b's idle 2 on one node of 8");
        assertEquals(Optional.empty(), fit.unfit(job(5), a), "beyond a's reach of 4: beyondQuota's refusal, not this one");
    }

    @Test void onlyTheModelsWhoseQuotaTheJobFitsCount() {
        Team a = team("a", Map.of("h100", 2, "a100", 4));
        Team b = team("b", Map.of("h100", 6));
        TeamFit fit = new TeamFit(Map.of("h100", Map.of("w1", 8), "a100", Map.of("w2", 4)), List.of(a, b));
        assertEquals(Optional.empty(), fit.unfit(job(4), a), "w2's 4 a100 are a's alone");
        String refused = fit.unfit(job(5), a).orElseThrow();
        assertTrue(refused.startsWith("job.yaml:1:37: gpus: 5 is more than any node has free of the other teams' quota: the largest"
            + " node of model h100, w1, has 8 GPUs; the other teams' quota of model h100 (b: 6) is 6 of the cluster's 8, which"
            + " leaves 2 for team a, so w1 has at most 2 GPUs free of the other teams' quota. "), refused);
        assertTrue(refused.endsWith("(expected at most 2, or split the work into jobs of at most 2 GPUs, or give team a more of the"
            + " quota in the inventory)"), refused);
        assertTrue(fit.unfit(job(8), b).orElseThrow().contains("(a: 2) is 2 of the cluster's 8, which leaves 6 for team b"),
            "a's 2 h100 are a's even on a single node");
        assertEquals(Optional.empty(), fit.unfit(job(6), b));
    }

    @Test void migDevicesAreNoTeamQuota() {
        Team a = team("a", Map.of("gpu", 1));
        TeamFit fit = new TeamFit(Map.of("gpu", Map.of("w1", 1)), List.of(a, team("b", Map.of("gpu", 1))));
        JobSpec mig = new JobSpec("train", "default", "pytorch", List.of(), 7, "job.yaml:1:37", Map.of(), Optional.empty(),
            Optional.empty(), JobSpec.Pod.NONE, "nvidia.com/mig-1g.10gb");
        assertEquals(Optional.empty(), fit.unfit(mig, a));
    }

    @Test void theFactsOfAnInventoryCountSharingReplicasAsQuotasDo() {
        Inventory inv = TeamJobsTest.INV; // 2 GPUs on w1 and w2, teams a and b of 2
        TeamFit fit = TeamFit.of(inv);
        assertEquals(Map.of("gpu", Map.of("w1", 2, "w2", 2)), fit.gpus());
        assertEquals(List.of("a", "b"), fit.teams().stream().map(Team::name).toList());
    }
}
