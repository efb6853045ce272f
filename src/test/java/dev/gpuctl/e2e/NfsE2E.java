package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.testbed.BedResult;
import dev.gpuctl.testbed.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * storage.nfs on the test bed's hosts: bootstrap makes the master an NFS server (nfs-kernel-server, exports restricted
 * to the nodes, /export/dataset read-only, /export/ckpt read-write) and the worker a client; a worker's mount writes
 * to the rw export and is refused on the ro one, a host that is not in the inventory is refused; a re-run changes
 * nothing; verify passes and leaves nothing behind; sabotages are caught (exit 4) and repaired by the printed fix.
 * The bed's kernel has no NFS (see testbed/README.md "NFS"): the server decision comes from the real export table.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NfsE2E {
    static TestBed bed;
    static Path inventory;
    static String server;
    static String worker;
    static String outsider;

    static final String LEFTOVERS = "ls -d /run/gpuctl-nfs-verify.* 2>/dev/null; grep -c ' /run/gpuctl-nfs-verify' /proc/self/mountinfo";

    @AfterAll static void down() {
        if (bed != null) bed.down();
    }

    @BeforeAll static void up() throws IOException {
        bed = TestBed.own("nfs", 2);
        server = bed.master();
        worker = bed.workers().get(0);
        outsider = bed.workers().get(1);
        Path full = bed.inventoryWithNfs(server);
        // the second worker stays out of the inventory: a host the exports must refuse
        inventory = full.resolveSibling("inventory-nfs.yaml");
        Files.writeString(inventory, Files.readString(full).lines()
            .filter(l -> !l.contains("name: " + outsider + ","))
            .collect(Collectors.joining("\n", "", "\n")));
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
    }

    @Test @Order(1) void theServerExportsToTheNodesOnly() {
        String nodes = bed.address(server) + " " + bed.address(worker);
        String exports = bed.ok(server, "exportfs -v");
        for (String a : nodes.split(" ")) {
            assertTrue(exports.matches("(?s).*/export/dataset\\s+" + a.replace(".", "\\.") + "\\([^)]*\\bro\\b.*"), exports);
            assertTrue(exports.matches("(?s).*/export/ckpt\\s+" + a.replace(".", "\\.") + "\\([^)]*\\brw\\b.*"), exports);
        }
        assertFalse(exports.contains(bed.address(outsider)), exports);
        // rootSquash's default: root on a node is nobody on every export, the read-write one too
        assertFalse(exports.contains("no_root_squash"), exports);
        String table = bed.ok(server, "exportfs -s");
        for (String a : nodes.split(" ")) {
            assertTrue(table.matches("(?s).*/export/dataset\\s+" + a.replace(".", "\\.") + "\\([^)]*,ro,root_squash.*"), table);
            assertTrue(table.matches("(?s).*/export/ckpt\\s+" + a.replace(".", "\\.") + "\\([^)]*,rw,root_squash.*"), table);
        }
        assertEquals("active", bed.ok(server, "systemctl is-active nfs-server").strip());
        assertEquals("enabled", bed.ok(server, "systemctl is-enabled nfs-server").strip());
        String file = bed.ok(server, "cat /etc/exports.d/gpuctl.exports");
        assertTrue(file.contains("/export/dataset " + bed.address(server) + "(ro,sync,no_subtree_check,root_squash) "
            + bed.address(worker) + "(ro,sync,no_subtree_check,root_squash)"), file);
        assertTrue(file.contains("/export/ckpt " + bed.address(server) + "(rw,sync,no_subtree_check,root_squash) "
            + bed.address(worker) + "(rw,sync,no_subtree_check,root_squash)"), file);
        assertEquals("installed", bed.ok(worker, "dpkg-query -W -f='${db:Status-Status}' nfs-common").strip());
    }

    @Test @Order(2) void aWorkerWritesToTheRwExportAndIsRefusedOnTheRoExport() {
        bed.ok(server, "echo sample > /export/dataset/sample.txt");
        String s = bed.address(server);
        bed.ok(worker, "mkdir -p /mnt/ds /mnt/ck && mount -t nfs " + s + ":/export/dataset /mnt/ds && mount -t nfs " + s + ":/export/ckpt /mnt/ck");
        try {
            assertEquals("sample", bed.ok(worker, "cat /mnt/ds/sample.txt").strip());
            BedResult refused = bed.ssh(worker, "touch /mnt/ds/new");
            assertEquals(1, refused.exit(), refused::toString);
            assertTrue(refused.err().contains("Read-only file system"), refused::toString);
            bed.ok(worker, "echo step-1 > /mnt/ck/model.ckpt");
            assertEquals("step-1", bed.ok(server, "cat /export/ckpt/model.ckpt").strip(), "the write reached the server");
        } finally {
            bed.ssh(worker, "umount /mnt/ds; umount /mnt/ck; rm -f /export/ckpt/model.ckpt");
            bed.ok(server, "rm -f /export/ckpt/model.ckpt /export/dataset/sample.txt");
        }
    }

    @Test @Order(3) void aHostOutsideTheInventoryIsRefused() {
        bed.ok(outsider, "export DEBIAN_FRONTEND=noninteractive; apt-get -qq update && apt-get -qq install -y nfs-common >/dev/null");
        BedResult r = bed.ssh(outsider, "mkdir -p /mnt/ck && mount -t nfs " + bed.address(server) + ":/export/ckpt /mnt/ck");
        assertEquals(32, r.exit(), r::toString);
        assertTrue(r.err().contains("access denied by server"), r::toString);
    }

    @Test @Order(4) void aSecondRunChangesNothing() {
        Gpuctl.Run r = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(0, r.count("changed"), r::toString);
        Gpuctl.Run nfs = Gpuctl.run("bootstrap", "--only", "nfs", inventory.toString());
        assertEquals(0, nfs.code(), nfs::toString);
        assertEquals(0, nfs.count("changed"), nfs::toString);
    }

    @Test @Order(5) void verifyPassesAndLeavesNothingBehind() {
        String before = bed.ok(server, "ls -A /export/dataset /export/ckpt; exportfs -s");
        Gpuctl.Run r = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().matches("(?s).*" + worker + "\\s+nfs\\s+mounts [^\\n]*/export/dataset, a write is refused \\(read-only\\)\\s+ok.*"), r.out());
        assertTrue(r.out().matches("(?s).*" + worker + "\\s+nfs\\s+mounts [^\\n]*/export/ckpt, a write succeeds or root is squashed\\s+ok.*"), r.out());
        assertEquals(before, bed.ok(server, "ls -A /export/dataset /export/ckpt; exportfs -s"));
        assertEquals("0", bed.ssh(worker, LEFTOVERS).out().strip(), "verify left a mount point or a mount");
    }

    @Test @Order(6) void anExportsFileOpenedToEveryoneIsCaughtAndRepaired() throws IOException {
        bed.ok(server, "sed -i 's/(ro,/(rw,/g' /etc/exports.d/gpuctl.exports && echo '/export/ckpt *(rw,no_root_squash)' >> /etc/exports.d/gpuctl.exports && exportfs -ra");
        // the outsider now gets in: that is what verify must catch
        bed.ok(outsider, "mount -t nfs " + bed.address(server) + ":/export/ckpt /mnt/ck && umount /mnt/ck");
        Gpuctl.Run table = Gpuctl.run("verify", inventory.toString());
        Gpuctl.Run json = Gpuctl.run("verify", "--json", inventory.toString());
        assertEquals(4, table.code(), table::toString);
        assertEquals(4, json.code(), json::toString);
        assertEquals(Set.of(server + " nfs", worker + " nfs"), json.failedChecks(), json::toString);
        assertTrue(table.out().contains("a write to the read-only export succeeded"), table::toString);
        assertTrue(table.out().contains("/export/ckpt is exported to"), table::toString);
        assertTrue(table.out().contains("which is not a node"), table::toString);
        assertEquals("0", bed.ssh(worker, LEFTOVERS).out().strip(), "a failed verify left a mount point or a mount");
        String fix = "gpuctl bootstrap --only nfs --hosts " + server + " " + inventory;
        assertTrue(table.out().contains("fix:   " + fix), table::toString);
        Gpuctl.Run repaired = Gpuctl.run(fix.substring("gpuctl ".length()).split(" "));
        assertEquals(0, repaired.code(), repaired::toString);
        assertEquals(0, Gpuctl.run("verify", inventory.toString()).code());
        BedResult r = bed.ssh(outsider, "mount -t nfs " + bed.address(server) + ":/export/ckpt /mnt/ck");
        assertEquals(32, r.exit(), "refused again after the repair: " + r);
    }

    @Test @Order(7) void aStoppedServerFailsTheWorkersMountsAndIsRestarted() throws IOException {
        bed.ok(server, "systemctl stop nfs-server");
        Gpuctl.Run json = Gpuctl.run("verify", "--json", inventory.toString());
        assertEquals(4, json.code(), json::toString);
        assertEquals(Set.of(server + " nfs", worker + " nfs"), json.failedChecks(), json::toString);
        assertTrue(json.out().contains("mount failed"), json::toString);
        assertEquals("0", bed.ssh(worker, LEFTOVERS).out().strip(), "a failed verify left a mount point or a mount");
        Gpuctl.Run repaired = Gpuctl.run("bootstrap", "--only", "nfs", inventory.toString());
        assertEquals(0, repaired.code(), repaired::toString);
        assertEquals(0, Gpuctl.run("verify", inventory.toString()).code());
    }

    @Test @Order(8) void afterTheServerRebootsVerifyPasses() {
        bed.reboot(server);
        Gpuctl.Run r = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, r.code(), r::toString);
    }

    /**
     * rootSquash: false on the read-write export, asked for on purpose: plan warns, bootstrap exports it
     * no_root_squash, verify agrees; back to the default, root is squashed again; no_root_squash put back by hand is
     * caught by verify and repaired by bootstrap.
     */
    @Test @Order(9) void noRootSquashOnlyWhereTheInventoryAsksAndCaughtWhenAddedByHand() throws IOException {
        Path open = inventory.resolveSibling("inventory-nfs-no-root-squash.yaml");
        String text = Files.readString(inventory);
        assertTrue(text.contains("path: /export/ckpt"), text);
        Files.writeString(open, text.replace("path: /export/ckpt", "path: /export/ckpt, rootSquash: false"));
        Gpuctl.Run plan = Gpuctl.run("plan", open.toString());
        assertTrue(plan.out().contains("/export/ckpt: read-write, ROOT ON EVERY NODE ACTS AS ROOT HERE (no_root_squash)"), plan::toString);
        assertTrue(plan.out().contains("warning: /export/ckpt has rootSquash: false"), plan::toString);
        assertEquals(0, Gpuctl.run("bootstrap", "--only", "nfs", open.toString()).code());
        String w = bed.address(worker).replace(".", "\\.");
        String table = bed.ok(server, "exportfs -s");
        assertTrue(table.matches("(?s).*/export/ckpt\\s+" + w + "\\([^)]*,rw,no_root_squash.*"), table);
        assertTrue(table.matches("(?s).*/export/dataset\\s+" + w + "\\([^)]*,ro,root_squash.*"), table);
        assertEquals(0, Gpuctl.run("verify", open.toString()).code());

        assertEquals(0, Gpuctl.run("bootstrap", "--only", "nfs", inventory.toString()).code());
        table = bed.ok(server, "exportfs -s");
        assertTrue(table.matches("(?s).*/export/ckpt\\s+" + w + "\\([^)]*,rw,root_squash.*"), table);
        assertFalse(bed.ok(server, "cat /etc/exports.d/gpuctl.exports").contains("no_root_squash"));
        assertEquals(0, Gpuctl.run("verify", inventory.toString()).code());
        // no_root_squash back by hand: the live table lets root in again, which verify names
        bed.ok(server, "sed -i 's/(rw,sync,no_subtree_check,root_squash)/(rw,sync,no_subtree_check,no_root_squash)/g' /etc/exports.d/gpuctl.exports && exportfs -ra");
        Gpuctl.Run v = Gpuctl.run("verify", inventory.toString());
        assertEquals(4, v.code(), v::toString);
        assertTrue(v.out().contains("/export/ckpt is no_root_squash to " + bed.address(worker) + ", expected root_squash"), v::toString);
        assertEquals(0, Gpuctl.run("bootstrap", "--only", "nfs", inventory.toString()).code());
        assertEquals(0, Gpuctl.run("verify", inventory.toString()).code());
    }

    /**
     * A NAS that is not a node (the host outside the inventory, its exports set up by hand as its admin would):
     * gpuctl leaves it alone, the worker gets the client and mounts each export for a test; an export the NAS stops
     * offering the worker fails verify on that worker.
     */
    @Test @Order(10) void anExternalServerThatIsNotANodeIsOnlyMountedFrom() throws IOException {
        String nas = bed.address(outsider);
        bed.ok(outsider, "export DEBIAN_FRONTEND=noninteractive; apt-get install -y -q nfs-kernel-server >/dev/null"
            + " && install -d -m 0777 /vol/data /vol/ckpt && printf '/vol/data %s(ro,sync,no_subtree_check)\\n/vol/ckpt %s(rw,sync,no_subtree_check)\\n' "
            + bed.address(worker) + " " + bed.address(worker) + " > /etc/exports && systemctl enable --now nfs-server && exportfs -ra");
        Path external = inventory.resolveSibling("inventory-nas.yaml");
        String text = Files.readString(inventory);
        String withNas = text.substring(0, text.indexOf("storage:")) + "storage:\n  nfs:\n    server: " + nas + "\n    exports:\n"
            + "      - { path: /vol/data, readOnly: true }\n      - { path: /vol/ckpt, rootSquash: true }\n";
        Files.writeString(external, withNas);
        String before = bed.ok(outsider, "sha256sum /etc/exports; exportfs -s; ls -A /etc/exports.d 2>&1; true");

        Gpuctl.Run plan = Gpuctl.run("plan", external.toString());
        assertEquals(0, plan.code(), plan::toString);
        assertTrue(plan.out().contains("NFS server " + nas + " is not a node: gpuctl does not configure it"), plan::toString);
        Gpuctl.Run r = Gpuctl.run("bootstrap", external.toString());
        assertEquals(0, r.code(), r::toString);
        Gpuctl.Run v = Gpuctl.run("verify", external.toString());
        assertEquals(0, v.code(), v::toString);
        assertTrue(v.out().contains("mounts " + nas + ":/vol/data, a write is refused (read-only)"), v::toString);
        assertTrue(v.out().contains("mounts " + nas + ":/vol/ckpt, a write succeeds or root is squashed"), v::toString);
        assertEquals(before, bed.ok(outsider, "sha256sum /etc/exports; exportfs -s; ls -A /etc/exports.d 2>&1; true"), "gpuctl changed the NAS");
        assertEquals("0", bed.ssh(worker, LEFTOVERS).out().strip(), "verify left a mount point or a mount");

        // the NAS stops exporting /vol/ckpt to the worker: verify names the mount on the worker
        bed.ok(outsider, "sed -i '/^\\/vol\\/ckpt /d' /etc/exports && exportfs -ra");
        Gpuctl.Run broken = Gpuctl.run("verify", external.toString());
        assertEquals(4, broken.code(), broken::toString);
        assertTrue(broken.out().lines().anyMatch(l -> l.matches(worker + "\\s+nfs\\s+mounts " + java.util.regex.Pattern.quote(nas + ":/vol/ckpt") + ".*FAIL")),
            broken::toString);
        assertFalse(broken.out().lines().anyMatch(l -> l.contains("/vol/data") && l.endsWith("FAIL")), broken::toString);
    }
}
