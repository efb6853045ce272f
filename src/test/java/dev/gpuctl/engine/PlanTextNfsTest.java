package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import java.util.List;
import org.junit.jupiter.api.Test;

/** plan says, per NFS export, whether root on a node acts as root on it. */
class PlanTextNfsTest {
    @Test void everyExportSaysWhoIsRootOnIt() {
        Nfs nfs = new Nfs("nas", List.of(new NfsExport("/export/dataset", true), new NfsExport("/export/ckpt", false),
            new NfsExport("/export/home", false, true), new NfsExport("/export/tools", true, false)));
        assertEquals("""
            NFS exports of nas (to the cluster's nodes only):
              /export/dataset: read-only, root on a node is mapped to nobody (root_squash)
              /export/ckpt: read-write, ROOT ON EVERY NODE ACTS AS ROOT HERE (no_root_squash; rootSquash: true to stop it)
              /export/home: read-write, root on a node is mapped to nobody (root_squash)
              /export/tools: read-only, ROOT ON EVERY NODE ACTS AS ROOT HERE (no_root_squash; rootSquash: true to stop it)
            """, PlanText.nfsAccess(nfs));
    }
}
