package dev.gpuctl.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.backup.EtcdRestore;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Phase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The restore of a whole control plane: its members from the inventory, its phases in order. */
class BackupWorkflowTest {
    @TempDir Path dir;
    static final String SHA = "ab".repeat(32);

    @Test void everyMastersMemberIsItsNodeNameAndIpInInventoryOrder() throws IOException {
        Inventory inv = TestInventory.ha(dir, "w1");
        List<EtcdRestore.Member> members = BackupWorkflow.members(inv).orElseThrow();
        assertEquals("m1=https://10.0.0.11:2380,m2=https://10.0.0.12:2380,m3=https://10.0.0.13:2380", EtcdRestore.initialCluster(members));
    }

    @Test void aMasterAddressedByNameWithoutNodeIpHasNoMember() throws IOException {
        Path f = Files.writeString(dir.resolve("named.yaml"), "cluster: { name: t, kubernetesVersion: \"1.35\", controlPlaneEndpoint: { vip: 10.0.0.100 } }\n"
            + "nodes:\n  - { name: m1, address: 10.0.0.11, role: master }\n  - { name: m2, address: m2.lab, role: master }\n"
            + "  - { name: m3, address: 10.0.0.13, role: master }\n");
        assertTrue(BackupWorkflow.members(dev.gpuctl.inventory.InventoryLoader.load(f)).isEmpty());
    }

    @Test void theRestoreChecksThenStopsEveryMasterBeforeAnyMemberIsRestored() throws IOException {
        Inventory inv = TestInventory.ha(dir);
        List<Phase> phases = BackupWorkflow.restorePhases(dir.resolve("up.tar.gz"), SHA, SHA, false, BackupWorkflow.members(inv).orElseThrow());
        assertEquals(List.of("restore-check", "restore-stop", "restore-etcd"), phases.stream().map(Phase::id).toList());
        assertTrue(phases.get(0).readOnly());
        assertFalse(phases.get(1).readOnly());
        assertEquals(List.of("restore-check"), phases.get(0).steps().stream().map(s -> s.id()).toList());
        assertEquals(List.of("restore-stop"), phases.get(1).steps().stream().map(s -> s.id()).toList());
        assertEquals(List.of("restore-etcd"), phases.get(2).steps().stream().map(s -> s.id()).toList());
        assertTrue(phases.get(2).title().contains("--initial-cluster (m1=https://10.0.0.11:2380,m2=https://10.0.0.12:2380,m3=https://10.0.0.13:2380)"),
            phases.get(2).title());
    }
}
