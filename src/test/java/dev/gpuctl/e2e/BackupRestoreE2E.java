package dev.gpuctl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.testbed.BedResult;
import dev.gpuctl.testbed.TestBed;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * gpuctl backup and restore on one small cluster (1 master + 1 GPU worker), in order: backups are private, checked and
 * rotated; restore is refused on a healthy master; a deleted Deployment comes back with --force; then the master's disk is
 * lost, the host prepared again and restored: the worker is Ready again without a new join, its GPU allocatable, and verify
 * is clean at once. An archive carrying a file outside backup's paths is refused before anything changes; a backup into a
 * sticky world-writable directory leaves its mode.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BackupRestoreE2E {
    static TestBed bed;
    static Path inventory;
    static String master;
    static String worker;
    static final String KUBECTL = "kubectl --kubeconfig=/etc/kubernetes/admin.conf ";
    static final String WEB = "cat > /root/web.yaml <<'EOF'\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n"
        + "spec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        + "    spec: {containers: [{name: web, image: nginx}]}\nEOF\n" + KUBECTL + "apply -f /root/web.yaml";

    static BootstrappedCluster.Lease cluster;

    @AfterAll static void down() {
        BootstrappedCluster.release(cluster);
    }

    /** The shared 1+1 cluster as right after bootstrap (its own inventory and .gpuctl/). */
    @BeforeAll static void up() {
        cluster = BootstrappedCluster.acquire(1);
        bed = cluster.bed();
        inventory = cluster.inventory();
        master = bed.master();
        worker = bed.workers().get(0);
        bed.ok(master, WEB);
    }

    static Path backups() { return inventory.getParent().resolve(".gpuctl/backups"); }

    static List<Path> archives() throws Exception {
        if (!Files.isDirectory(backups())) return List.of();
        try (Stream<Path> s = Files.list(backups())) {
            return s.filter(p -> p.toString().endsWith(".tar.gz")).sorted().toList();
        }
    }

    @Test @Order(1) void backupIsAPrivateCheckedListedArchiveAndRotationKeepsN() throws Exception {
        for (int i = 0; i < 3; i++) {
            if (i > 0) Thread.sleep(1100); // archives are named to the second
            Gpuctl.Run r = Gpuctl.run("backup", "--keep", "2", inventory.toString());
            assertEquals(0, r.code(), r::toString);
            assertTrue(r.out().contains(" etcd-snapshot.db\n") && r.out().contains(" etc/kubernetes/pki/ca.key\n")
                && r.out().contains(" etc/kubernetes/pki/etcd/ca.key\n") && r.out().contains(" etc/kubernetes/gpuctl/kubeadm-init.yaml\n"), r::toString);
            assertFalse(r.out().contains("PRIVATE KEY") || r.err().contains("PRIVATE KEY"), "no key material is printed");
        }
        List<Path> kept = archives();
        assertEquals(2, kept.size(), kept::toString);
        for (Path a : kept) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(a)), a.toString());
            String sum = Files.readString(a.resolveSibling(a.getFileName() + ".sha256"));
            assertEquals(BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(a)), a.getFileName().toString()), sum);
            // sha256sum itself agrees (the file is what `sha256sum -c` reads)
            Process p = new ProcessBuilder("sha256sum", "-c", a.getFileName() + ".sha256").directory(a.getParent().toFile()).start();
            assertEquals(0, p.waitFor());
            assertTrue(BackupArchive.missing(BackupArchive.entries(Files.readAllBytes(a))).isEmpty());
        }
        try (Stream<Path> s = Files.list(backups())) {
            assertEquals(4, s.count(), "two archives and their two .sha256 files, nothing else");
        }
        assertEquals("", bed.ok(master, "ls -d /var/tmp/gpuctl-backup.* 2>/dev/null; ls /var/lib/etcd | grep snapshot || true"),
            "the work directory and the snapshot are gone from the master");
    }

    @Test @Order(2) void backupIntoAStickyWorldWritableDirectoryLeavesItsMode() throws Exception {
        Path tmp = Files.createDirectories(inventory.getParent().resolve("shared-tmp"));
        assertEquals(0, new ProcessBuilder("chmod", "1777", tmp.toString()).inheritIO().start().waitFor());
        Path out = tmp.resolve("lab.tar.gz");
        Gpuctl.Run r = Gpuctl.run("backup", "--out", out.toString(), inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(01777, ((Number) Files.getAttribute(tmp, "unix:mode")).intValue() & 07777, "the directory keeps 1777");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out.resolveSibling("lab.tar.gz.sha256"))));
        assertTrue(BackupArchive.refused(BackupArchive.entries(Files.readAllBytes(out))).isEmpty());
    }

    @Test @Order(3) void anArchiveCarryingASudoersFileIsRefusedBeforeAnyChange() throws Exception {
        Path newest = archives().get(archives().size() - 1);
        Path dir = Files.createDirectories(inventory.getParent().resolve("hostile"));
        Path hostile = dir.resolve("lab.tar.gz");
        Files.write(hostile, withMember(Files.readAllBytes(newest), "etc/sudoers.d/x", "mallory ALL=(ALL) NOPASSWD: ALL\n"));
        Files.setPosixFilePermissions(hostile, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(dir.resolve("lab.tar.gz.sha256"),
            BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(hostile)), "lab.tar.gz"));
        String before = bed.ok(master, "ls -la /var/backups /etc/kubernetes /etc/kubernetes/gpuctl; sha256sum /etc/kubernetes/admin.conf");
        Gpuctl.Run r = Gpuctl.run("restore", "--force", hostile.toString(), inventory.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("member 'etc/sudoers.d/x' is not a path gpuctl backup writes"), r::toString);
        assertEquals("absent", bed.ok(master, "test -e /etc/sudoers.d/x && echo present || echo absent").strip());
        assertEquals(before, bed.ok(master, "ls -la /var/backups /etc/kubernetes /etc/kubernetes/gpuctl; sha256sum /etc/kubernetes/admin.conf"),
            "nothing on the master changed");
    }

    /** The archive with one more regular file (a tar any attacker could write), gzip'd again. */
    static byte[] withMember(byte[] tarGz, String name, String body) throws Exception {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        try (var in = new org.apache.commons.compress.archivers.tar.TarArchiveInputStream(
                 new org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream(new java.io.ByteArrayInputStream(tarGz)));
             var out = new org.apache.commons.compress.archivers.tar.TarArchiveOutputStream(
                 new org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream(b))) {
            out.setLongFileMode(org.apache.commons.compress.archivers.tar.TarArchiveOutputStream.LONGFILE_POSIX);
            for (var e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
                out.putArchiveEntry(e);
                in.transferTo(out);
                out.closeArchiveEntry();
            }
            var extra = new org.apache.commons.compress.archivers.tar.TarArchiveEntry(name);
            byte[] content = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            extra.setSize(content.length);
            out.putArchiveEntry(extra);
            out.write(content);
            out.closeArchiveEntry();
        }
        return b.toByteArray();
    }

    @Test @Order(4) void restoreIsRefusedOnAHealthyMasterWithoutForce() throws Exception {
        Path newest = archives().get(archives().size() - 1);
        Gpuctl.Run r = Gpuctl.run("restore", newest.toString(), inventory.toString());
        assertEquals(3, r.code(), r::toString);
        assertTrue(r.err().contains("runs a healthy cluster") && r.err().contains("--force"), r::toString);
        assertEquals("absent", bed.ok(master, "test -e /etc/kubernetes/gpuctl/restored-from && echo present || echo absent").strip());
    }

    @Test @Order(5) void restoreForceBringsADeletedDeploymentBackAndASecondRunChangesNothing() throws Exception {
        Path newest = archives().get(archives().size() - 1);
        bed.ok(master, KUBECTL + "delete deployment web");
        assertFalse(bed.ssh(master, KUBECTL + "get deployment web").ok());
        Gpuctl.Run r = Gpuctl.run("restore", "--force", newest.toString(), inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertTrue(bed.ok(master, KUBECTL + "get deployment web").contains("web"));
        assertTrue(bed.ok(master, "ls /var/backups/").contains("gpuctl-before-restore-"), "the state it replaced is kept aside");
        Gpuctl.Run again = Gpuctl.run("restore", "--force", newest.toString(), inventory.toString());
        assertEquals(0, again.code(), again::toString);
        assertEquals(0, again.count("changed"), again::toString);
    }

    @Test @Order(6) void aMasterWhoseDiskWasLostIsRestoredAndTheWorkerComesBackWithoutJoining() throws Exception {
        Path newest = archives().get(archives().size() - 1);
        String workerKubeconfig = bed.ok(worker, "sha256sum /etc/kubernetes/kubelet.conf");
        String ca = bed.ok(master, "sha256sum /etc/kubernetes/pki/ca.crt");
        BedResult wiped = bed.bed("wipe", master);
        assertEquals(0, wiped.exit(), wiped::toString);
        assertEquals("absent", bed.ok(master, "test -e /etc/kubernetes/pki || test -e /var/lib/etcd && echo present || echo absent").strip());
        Gpuctl.Run refused = Gpuctl.run("restore", newest.toString(), inventory.toString());
        assertEquals(3, refused.code(), "host preparation not done yet:\n" + refused);
        assertTrue(refused.err().contains("--only proxy,time,swap,kernel,runtime,packages,driver-hold"), refused::toString);
        Gpuctl.Run prep = Gpuctl.run("bootstrap", inventory.toString(), "--hosts", master, "--only", "proxy,time,swap,kernel,runtime,packages,driver-hold");
        assertEquals(0, prep.code(), prep::toString);
        Gpuctl.Run r = Gpuctl.run("restore", newest.toString(), inventory.toString());
        assertEquals(0, r.code(), r::toString);
        assertEquals(ca, bed.ok(master, "sha256sum /etc/kubernetes/pki/ca.crt"), "the cluster's CA is back");
        assertEquals(workerKubeconfig, bed.ok(worker, "sha256sum /etc/kubernetes/kubelet.conf"), "the worker did not join again");
        var node = new ObjectMapper().readTree(bed.ok(master, KUBECTL + "get node " + worker + " -o json"));
        assertEquals("1", node.path("status").path("allocatable").path("nvidia.com/gpu").asText(), node::toPrettyString);
        assertTrue(bed.ok(master, KUBECTL + "get deployment web").contains("web"));
        // everything verify checks is back: the ssh user's ~/.kube/config, this machine's admin.conf, gpuctl's manifests
        Gpuctl.Run verified = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, verified.code(), "verify right after the restore:\n" + verified);
        assertEquals("present", bed.ok(master, "test -s /root/.kube/config && echo present || echo absent").strip());
        // bootstrap afterwards sees the restored cluster: no second kubeadm init (the Deployment, made after init, stays)
        Gpuctl.Run boot = Gpuctl.run("bootstrap", inventory.toString());
        assertEquals(0, boot.code(), boot::toString);
        assertTrue(bed.ok(master, KUBECTL + "get deployment web").contains("web"));
        assertEquals(ca, bed.ok(master, "sha256sum /etc/kubernetes/pki/ca.crt"));
        Gpuctl.Run verify = Gpuctl.run("verify", inventory.toString());
        assertEquals(0, verify.code(), verify::toString);
    }
}
