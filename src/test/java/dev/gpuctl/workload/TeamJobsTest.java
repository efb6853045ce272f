package dev.gpuctl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.inventory.Team;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** A job for a team: its team, its namespace, its queue label and suspension, and the refusal of one Kueue never admits. */
class TeamJobsTest {
    static final Inventory INV = InventoryLoader.parse("inventory.yaml", """
        cluster: { name: lab, kubernetesVersion: "1.35" }
        nodes:
          - { name: m, address: 10.0.0.1, role: master }
          - { name: w1, address: 10.0.0.2, role: worker, gpus: 2 }
          - { name: w2, address: 10.0.0.3, role: worker, gpus: 2 }
        teams:
          - { name: a, gpus: 2, members: [alice] }
          - { name: b, gpus: 2, borrowing: false, members: [bob] }
        """, Path.of("/tmp"), Map.of("HOME", "/root"));

    /** Two teams of 1 GPU on 4: the cohort lends only what the teams own. */
    static final Inventory SMALL_COHORT = InventoryLoader.parse("inventory.yaml", """
        cluster: { name: lab, kubernetesVersion: "1.35" }
        nodes:
          - { name: m, address: 10.0.0.1, role: master }
          - { name: w1, address: 10.0.0.2, role: worker, gpus: 4 }
        teams:
          - { name: a, gpus: 1 }
          - { name: b, gpus: 1 }
        """, Path.of("/tmp"), Map.of("HOME", "/root"));

    @Test void theCohortsCapacityBoundsBorrowing() {
        JobSpec three = JobSpecLoader.parse("job.yaml", "{ name: train, image: pytorch, gpus: 3 }\n", SMALL_COHORT);
        String refused = TeamJobs.beyondQuota(three, SMALL_COHORT, SMALL_COHORT.team("a").orElseThrow()).orElseThrow();
        assertTrue(refused.contains("can ever get: 2 GPUs (its quota 1 and no borrowing limit; the cohort's capacity (the teams' quotas"
            + " together) is 2, the cluster has 4)"), refused);
    }

    static JobSpec spec(String extra) { return spec(1, extra); }

    static JobSpec spec(int gpus, String extra) {
        return JobSpecLoader.parse("job.yaml", "{ name: train, image: pytorch, gpus: " + gpus + extra + " }\n", INV);
    }

    @Test void theTeamAskedElseThePersonsTeam() {
        assertEquals("b", TeamJobs.team(INV, Optional.of("b"), Optional.of("alice")).orElseThrow().name());
        assertEquals("a", TeamJobs.team(INV, Optional.empty(), Optional.of("alice")).orElseThrow().name());
        WorkloadException none = assertThrows(WorkloadException.class, () -> TeamJobs.team(INV, Optional.empty(), Optional.of("carol")));
        assertTrue(none.refused());
        assertTrue(none.getMessage().contains("'carol' is a member of none: say which team's queue the job goes to with --team (one of: a, b)"),
            none.getMessage());
        assertTrue(assertThrows(WorkloadException.class, () -> TeamJobs.team(INV, Optional.of("c"), Optional.empty())).getMessage()
            .startsWith("--team c: no such team in inventory.yaml (expected one of: a, b)"));
    }

    @Test void theJobGoesToTheTeamsNamespaceQueuedAndSuspended() {
        Team a = INV.team("a").orElseThrow();
        JobSpec job = TeamJobs.inTeam(spec(""), a);
        assertEquals("team-a", job.namespace());
        Map<String, Object> tree = new Yaml(new SafeConstructor(new LoaderOptions())).load(TeamJobs.render(job, a, Optional.of("alice")));
        @SuppressWarnings("unchecked") Map<String, Object> md = (Map<String, Object>) tree.get("metadata");
        assertEquals(Map.of("app.kubernetes.io/managed-by", "gpuctl", "kueue.x-k8s.io/queue-name", "a", "gpuctl.dev/person", "alice"),
            md.get("labels"));
        assertEquals("team-a", md.get("namespace"));
        @SuppressWarnings("unchecked") Map<String, Object> spec = (Map<String, Object>) tree.get("spec");
        assertEquals(true, spec.get("suspend"));
        assertEquals(0, spec.get("backoffLimit"), "a real failure still fails the job at once");
        assertTrue(!TeamJobs.render(job, a, Optional.of("bob")).contains("gpuctl.dev/person"), "bob is no member of a");
        WorkloadException other = assertThrows(WorkloadException.class, () -> TeamJobs.inTeam(spec(", namespace: research"), a));
        assertTrue(other.getMessage().contains("team a's jobs run in namespace team-a"), other.getMessage());
    }

    @Test void aJobBeyondTheTeamsQuotaAndBorrowingIsRefused() {
        Team a = INV.team("a").orElseThrow();
        Team b = INV.team("b").orElseThrow();
        assertEquals(Optional.empty(), TeamJobs.beyondQuota(spec(4, ""), INV, a), "a may borrow b's 2: 4 in all");
        String refused = TeamJobs.beyondQuota(spec(3, ""), INV, b).orElseThrow();
        assertTrue(refused.contains("gpus: 3 is more than team b can ever get: 2 GPUs (its quota 2 + borrowing limit 0 = 2; the"
            + " cohort's capacity (the teams' quotas together) is 4, the cluster has 4)"), refused);
        String cohort = TeamJobs.beyondQuota(spec(5, ""), INV, a).orElseThrow();
        assertTrue(cohort.contains("gpus: 5 is more than team a can ever get: 4 GPUs (its quota 2 and no borrowing limit; the cohort's"
            + " capacity (the teams' quotas together) is 4"), cohort);
        assertTrue(cohort.startsWith("job.yaml:1:"), cohort);
    }

    @Test void aJobNoNodeHoldsFreeOfTheOtherTeamsQuotaIsRefused() {
        Team a = INV.team("a").orElseThrow();
        assertEquals(Optional.empty(), TeamJobs.beyondNodes(spec(2, ""), INV, a));
        String refused = TeamJobs.beyondNodes(spec(3, ""), INV, a).orElseThrow();
        assertTrue(refused.startsWith("job.yaml:1:") && refused.contains(": gpus: 3 is more than any node has free of the other teams'"
            + " quota: the largest node, w1, has 2 GPUs; the other teams' quota (b: 2) is 2 of the cluster's 4, which leaves 2 for"
            + " team a, so w1 has at most 2 GPUs free of the other teams' quota."), refused);
    }
}
