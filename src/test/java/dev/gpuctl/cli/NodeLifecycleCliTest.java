package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.steps.NodePhases;
import dev.gpuctl.step.Phase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** drain and uncordon: wrong input is exit 2 before any connection (the example inventory's hosts are never reached). */
class NodeLifecycleCliTest {
    static final String INV = CliTest.EXAMPLE.toString();

    @Test void anUnknownHostIsExit2NamingTheInventorysHosts() {
        for (String cmd : new String[] {"drain", "uncordon"}) {
            CliTest.Run r = CliTest.run(cmd, "-i", INV, "worker-9");
            assertEquals(2, r.code(), r::toString);
            assertTrue(r.err().contains("unknown host 'worker-9' for " + cmd + " (the inventory has: master, worker-1"), r::err);
        }
    }

    @Test void aHostIsRequired() {
        CliTest.Run r = CliTest.run("drain", "-i", INV);
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("Missing required parameter: 'HOST'"), r::err);
    }

    @Test void aBadDrainTimeoutIsExit2() {
        CliTest.Run r = CliTest.run("drain", "-i", INV, "--drain-timeout", "soon", "worker-1");
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("--drain-timeout"), r::err);
    }

    @Test void helpListsTheOptionsAndExitCodes() {
        CliTest.Run r = CliTest.run("drain", "--help");
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("--drain-timeout") && r.out().contains("--force") && r.out().contains("gpuctl drain -i inventory.yaml worker-2"), r::out);
    }

    /** The help tells the order the phases run in: drain, reset, delete the node (last, or its kubelet registers it again). */
    @Test void removeNodesHelpSaysTheOrderItsPhasesRunIn() {
        List<String> phases = NodePhases.removeNodes(List.of("worker-1"), Duration.ofMinutes(1), false, false).stream().map(Phase::id).toList();
        assertEquals(List.of("drain", "reset", "delete-node"), phases);
        String help = CliTest.run("remove-node", "--help").out().replaceAll("\\s+", " ");
        int drain = help.indexOf("Drain them");
        int reset = help.indexOf("kubeadm reset each host");
        int delete = help.indexOf("then delete the nodes");
        assertTrue(drain >= 0 && drain < reset && reset < delete, help);
    }

    @Test void removeNodeRefusesTheMasterBeforeAnyConnection() {
        CliTest.Run r = CliTest.run("remove-node", "-i", INV, "master");
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("master is the master: remove-node takes workers only; `gpuctl reset` takes the whole cluster down"), r::err);
    }

    @Test void resetShowsItsPlanFirstAndWithoutAnAnswerChangesNothing() {
        java.io.InputStream in = System.in;
        try {
            System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
            CliTest.Run r = CliTest.run("reset", INV);
            assertEquals(2, r.code(), r::toString);
            assertTrue(r.err().startsWith("reset of cluster gpu-lab:\n  1. workers worker-1, worker-2"), r::err);
            assertTrue(r.err().contains("kept: each host's preparation"), r::err);
            assertTrue(r.err().contains("not confirmed (no input: pass --yes to reset without asking); nothing was changed"), r::err);
            System.setIn(new java.io.ByteArrayInputStream("gpu-lab-typo\n".getBytes()));
            CliTest.Run typo = CliTest.run("reset", INV);
            assertEquals(2, typo.code(), typo::toString);
            assertTrue(typo.err().contains("not confirmed; nothing was changed"), typo::err);
        } finally {
            System.setIn(in);
        }
    }
}
