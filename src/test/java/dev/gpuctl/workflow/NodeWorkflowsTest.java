package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.StateDir;
import dev.gpuctl.inventory.Inventory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** reset's plan text and the archive of the laptop's state: kept, never deleted; nothing to do the second time. */
class NodeWorkflowsTest {
    @Test void theClustersLocalStateIsMovedToTheArchiveOnceAndLogsStay(@TempDir Path dir) throws Exception {
        Inventory inv = TestInventory.of(dir, "w1", "w2");
        Path own = inv.stateDir().resolve("t");
        StateDir.ensurePrivateDir(own);
        Files.writeString(own.resolve("admin.conf"), "kubeconfig");
        StateDir.ensurePrivateDir(inv.stateDir().resolve("logs"));

        Optional<Path> archived = NodeWorkflows.archiveClusterState(inv);
        assertTrue(archived.isPresent());
        assertTrue(archived.get().getFileName().toString().matches("t-reset-\\d{8}-\\d{6}"), archived::toString);
        assertEquals("kubeconfig", Files.readString(archived.get().resolve("admin.conf")));
        assertFalse(Files.exists(own));
        assertTrue(Files.isDirectory(inv.stateDir().resolve("logs")));
        assertEquals(Optional.empty(), NodeWorkflows.archiveClusterState(inv), "a second reset has nothing to archive");
    }

    @Test void thePlanSaysTheOrderAndWhatStays(@TempDir Path dir) throws Exception {
        Inventory inv = TestInventory.of(dir, "w1", "w2");
        String plan = NodeWorkflows.resetPlan(inv, false);
        assertTrue(plan.startsWith("reset of cluster t:\n  1. workers w1, w2, in parallel: kubeadm reset -f --cri-socket "
            + inv.cluster().runtime().criSocket()), plan);
        assertTrue(plan.contains("\n  2. master m: the same"), plan);
        assertTrue(plan.contains("\n  3. this machine: " + inv.stateDir().resolve("t")), plan);
        assertTrue(plan.contains("kept: each host's preparation"), plan);

        String restoring = NodeWorkflows.resetPlan(inv, true);
        assertTrue(restoring.contains("\n  3. every host: put back every file gpuctl changed from its .gpuctl-orig backup"), restoring);
        assertTrue(restoring.contains("\n  4. this machine: "), restoring);
        assertTrue(restoring.contains("kept: the packages gpuctl installed"), restoring);
        assertFalse(restoring.contains("kept: each host's preparation"), restoring);
    }
}
