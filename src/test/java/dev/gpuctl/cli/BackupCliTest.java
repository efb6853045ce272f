package dev.gpuctl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.backup.BackupArchive;
import dev.gpuctl.backup.BackupArchiveTest;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** backup and restore refuse wrong input with exit 2 before any connection (the example inventory's hosts are never reached). */
class BackupCliTest {
    static final String INV = CliTest.EXAMPLE.toString();

    static void usage(CliTest.Run r, String expected) {
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains(expected), r::toString);
        assertFalse(r.err().contains("Exception") || r.err().contains("at dev.gpuctl"), r::toString);
    }

    @Test void backupRefusesAnUnsafeNameAnExistingFileAndKeepZero(@TempDir Path dir) throws Exception {
        usage(CliTest.run("backup", "--out", dir.resolve("a b;reboot.tgz").toString(), INV), "the file name must be letters, digits");
        Path existing = dir.resolve("lab.tar.gz");
        Files.writeString(existing, "mine");
        usage(CliTest.run("backup", "--out", existing.toString(), INV), existing + " exists; nothing was written");
        assertEquals("mine", Files.readString(existing));
        assertEquals(2, CliTest.run("backup", "--keep", "0", INV).code());
    }

    @Test void restoreChecksTheArchiveOnThisMachineFirst(@TempDir Path dir) throws Exception {
        usage(CliTest.run("restore", dir.resolve("none.tar.gz").toString(), INV), "no backup archive at " + dir.resolve("none.tar.gz"));
        Path a = dir.resolve("lab.tar.gz");
        try (InputStream in = getClass().getResourceAsStream("/backup/complete.tar.gz")) {
            Files.write(a, in.readAllBytes());
        }
        Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(dir.resolve("lab.tar.gz.sha256"), BackupArchive.sha256Line("0".repeat(64), "lab.tar.gz"));
        usage(CliTest.run("restore", a.toString(), INV), "does not match " + dir.resolve("lab.tar.gz.sha256"));
        Files.writeString(dir.resolve("lab.tar.gz.sha256"), BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(a)), "lab.tar.gz"));
        Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-r--r--"));
        usage(CliTest.run("restore", a.toString(), INV), "readable by others");
    }

    @Test void backupRefusesADirectoryOthersMayWriteAndALinkAtThePathBeforeAnyConnection(@TempDir Path dir) throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        usage(CliTest.run("backup", "--out", open.resolve("lab.tar.gz").toString(), INV), open + " is writable by others (mode 0777) and not sticky");
        assertEquals("rwxrwxrwx", PosixFilePermissions.toString(Files.getPosixFilePermissions(open)), "its mode is left as it was");
        Path victim = Files.writeString(dir.resolve("victim"), "untouched");
        Path link = Files.createSymbolicLink(dir.resolve("lab.tar.gz"), victim);
        usage(CliTest.run("backup", "--out", link.toString(), INV), link + " is a symbolic link");
        assertEquals("untouched", Files.readString(victim));
    }

    @Test void restoreRefusesAnArchiveCarryingAFileOutsideBackupsPathsNamingIt(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("lab.tar.gz");
        Files.write(a, BackupArchiveTest.tarGz(BackupArchiveTest.with(BackupArchiveTest.M.file("etc/sudoers.d/x", "mallory ALL=(ALL) NOPASSWD: ALL\n"))));
        Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(dir.resolve("lab.tar.gz.sha256"), BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(a)), "lab.tar.gz"));
        usage(CliTest.run("restore", a.toString(), INV), "member 'etc/sudoers.d/x' is not a path gpuctl backup writes");
        usage(CliTest.run("restore", a.toString(), INV), "nothing was changed");
    }

    @Test void restoreRefusesAnotherClustersBackupBeforeAnyConnection(@TempDir Path dir) throws Exception {
        Path inv = Files.copy(Path.of(INV), dir.resolve("inventory.yaml"));
        String ca = Files.readString(Path.of("src/test/resources/kubeconfig/ca.crt"));
        String other = Files.readString(Path.of("src/test/resources/kubeconfig/other-ca.crt"));
        Path record = dir.resolve(".gpuctl/gpu-lab/ca-cert-hash");
        Files.createDirectories(record.getParent());
        Files.writeString(record, dev.gpuctl.kube.Kubeadm.caCertHash(ca) + "\n");
        java.util.List<BackupArchiveTest.M> members = new java.util.ArrayList<>(BackupArchiveTest.complete().stream()
            .filter(m -> !m.name().equals("etc/kubernetes/pki/ca.crt")).toList());
        members.add(BackupArchiveTest.M.file("etc/kubernetes/pki/ca.crt", other));
        Path a = dir.resolve("lab.tar.gz");
        Files.write(a, BackupArchiveTest.tarGz(members));
        Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(dir.resolve("lab.tar.gz.sha256"), BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(a)), "lab.tar.gz"));
        usage(CliTest.run("restore", a.toString(), inv.toString()), "its cluster CA (" + dev.gpuctl.kube.Kubeadm.caCertHash(other)
            + ") is not the one this cluster was bootstrapped with (" + dev.gpuctl.kube.Kubeadm.caCertHash(ca));
    }
}
