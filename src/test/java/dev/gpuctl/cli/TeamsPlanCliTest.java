package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * plan shows the inventory's teams; a team quota above the cluster's GPUs, and a job no team queue or no node could ever
 * hold, are FILE:LINE:COLUMN and exit 2.
 */
class TeamsPlanCliTest {
    static final String INVENTORY = """
        cluster: { name: lab, kubernetesVersion: "1.35" }
        nodes:
          - { name: m, address: 10.0.0.1, role: master }
          - { name: w1, address: 10.0.0.2, role: worker, gpus: 2 }
          - { name: w2, address: 10.0.0.3, role: worker, gpus: 2 }
        teams:
          - { name: vision, gpus: 2, members: [alice, bob] }
          - { name: nlp, gpus: %s, borrowing: 1 }
        """;

    @Test void planShowsTheTeams(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, INVENTORY.formatted("2"));
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("""
              vision (namespace team-vision): 2 GPUs, may borrow idle GPUs; members alice, bob
              nlp (namespace team-nlp): 2 GPUs, may borrow up to 1
            """), r.toString());
    }

    @Test void jobSubmitRefusesAnUnknownTeamAndAJobBeyondItsQuotaBeforeConnecting(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, INVENTORY.formatted("2").replace("127.0.0.1", "x"));
        Path job = dir.resolve("job.yaml");
        Files.writeString(job, "{ name: train, image: pytorch, gpus: 1 }\n");
        CliTest.Run unknown = CliTest.run("job", "submit", job.toString(), inv.toString(), "--team", "ops");
        assertEquals(ExitCode.USAGE.code(), unknown.code(), unknown.toString());
        assertTrue(unknown.err().contains("--team ops: no such team in inventory.yaml (expected one of: vision, nlp)"), unknown.toString());
        Files.writeString(job, "{ name: train, image: pytorch, gpus: 4 }\n");
        CliTest.Run big = CliTest.run("job", "submit", job.toString(), inv.toString(), "--team", "nlp");
        assertEquals(ExitCode.USAGE.code(), big.code(), big.toString());
        assertTrue(big.err().contains("job.yaml:1:38: gpus: 4 is more than team nlp can ever get: 3 GPUs (its quota 2 + borrowing limit 1 = 3;"),
            big.toString());
        Files.writeString(job, "{ name: train, image: pytorch, gpus: 3 }\n");
        CliTest.Run wide = CliTest.run("job", "submit", job.toString(), inv.toString(), "--team", "nlp");
        assertEquals(ExitCode.USAGE.code(), wide.code(), wide.toString());
        assertTrue(wide.err().contains("job.yaml:1:38: gpus: 3 is more than any node has free of the other teams' quota: the largest node,"
            + " w1, has 2 GPUs; the other teams' quota (vision: 2) is 2 of the cluster's 4, which leaves 2 for team nlp"), wide.toString());
        assertTrue(wide.err().contains("(expected at most 2, or split the work into jobs of at most 2 GPUs, or give team nlp more of the"
            + " quota in the inventory)"), wide.toString());
        assertFalse(wide.err().contains("Exception"), wide.toString());
    }

    @Test void queueNeedsTeamsAndAKnownTeam(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, INVENTORY.formatted("2"));
        CliTest.Run unknown = CliTest.run("queue", "--team", "ops", inv.toString());
        assertEquals(ExitCode.USAGE.code(), unknown.code(), unknown.toString());
        assertTrue(unknown.err().contains("--team ops: no such team (expected one of: vision, nlp)"), unknown.toString());
        Files.writeString(inv, INVENTORY.formatted("2").substring(0, INVENTORY.indexOf("teams:")));
        CliTest.Run none = CliTest.run("queue", inv.toString());
        assertEquals(ExitCode.USAGE.code(), none.code(), none.toString());
        assertTrue(none.err().contains("inventory.yaml has no teams:"), none.toString());
    }

    @Test void aQuotaAboveTheClustersGpusIsExit2AtItsPlace(@TempDir Path dir) throws IOException {
        Path inv = dir.resolve("inventory.yaml");
        Files.writeString(inv, INVENTORY.formatted("5"));
        CliTest.Run r = CliTest.run("plan", inv.toString());
        assertEquals(ExitCode.USAGE.code(), r.code(), r.toString());
        assertEquals(2, ExitCode.USAGE.code());
        assertTrue(r.err().contains(inv + ":8:24: teams[1].gpus: team 'nlp' gets 5 GPUs, above the cluster's 4"), r.toString());
        assertFalse(r.err().contains("Exception"), r.toString());
    }
}
