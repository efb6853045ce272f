package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.inventory.Nfs;
import dev.gpuctl.inventory.NfsExport;
import java.util.List;
import org.junit.jupiter.api.Test;

/** plan says, per NFS export, whether root on a node acts as root on it. */
class PlanTextNfsTest {
    /** Root is squashed unless an export says rootSquash: false, and each such export gets a warning. */
    @Test void everyExportSaysWhoIsRootOnIt() {
        Nfs nfs = new Nfs("nas", List.of(new NfsExport("/export/dataset", true), new NfsExport("/export/ckpt", false),
            new NfsExport("/export/home", false, true), new NfsExport("/export/tools", true, false)));
        assertEquals("""
            NFS exports of nas (to the cluster's nodes only):
              /export/dataset: read-only, root on a node is mapped to nobody (root_squash)
              /export/ckpt: read-write, root on a node is mapped to nobody (root_squash)
              /export/home: read-write, root on a node is mapped to nobody (root_squash)
              /export/tools: read-only, ROOT ON EVERY NODE ACTS AS ROOT HERE (no_root_squash)
              warning: /export/tools has rootSquash: false: any pod running as root on any node can plant root-owned setuid files in it; remove rootSquash: false unless every node and image is trusted
            """, PlanText.nfsAccess(nfs));
    }
}
