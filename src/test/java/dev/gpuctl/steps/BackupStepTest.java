package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.Backups;
import dev.gpuctl.backup.BackupArchive;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackupStepTest {
    @TempDir Path tmp;

    Path archive(String fixture, String name) throws Exception {
        Path a = tmp.resolve(name);
        try (InputStream in = getClass().getResourceAsStream("/backup/" + fixture)) {
            Files.write(a, in.readAllBytes());
        }
        Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-------"));
        Files.writeString(BackupStep.sumFile(a), BackupArchive.sha256Line(BackupArchive.sha256(Files.readAllBytes(a)), name));
        return a;
    }

    @Test void aPrivateArchiveThatMatchesItsSumAndHasTheSnapshotChecksOut() throws Exception {
        BackupStep.Inspected in = BackupStep.inspect(archive("complete.tar.gz", "lab-20261204T061500Z.tar.gz"));
        assertEquals(Optional.empty(), in.problem());
        assertEquals(64, in.sha256().length());
    }

    @Test void eachWayAnArchiveCanBeWrongIsNamed() throws Exception {
        assertEquals(Optional.of("no backup archive at " + tmp.resolve("none.tar.gz") + " yet"),
            BackupStep.inspect(tmp.resolve("none.tar.gz")).problem());
        Path open = archive("complete.tar.gz", "open.tar.gz");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        assertTrue(BackupStep.inspect(open).problem().orElseThrow().contains("readable by others"));
        Path changed = archive("complete.tar.gz", "changed.tar.gz");
        Files.write(changed, new byte[] {1}, java.nio.file.StandardOpenOption.APPEND);
        assertTrue(BackupStep.inspect(changed).problem().orElseThrow().contains("does not match"));
        Path noSnap = archive("no-snapshot.tar.gz", "nosnap.tar.gz");
        assertTrue(BackupStep.inspect(noSnap).problem().orElseThrow().endsWith("lacks etcd-snapshot.db"));
        Path noSum = archive("complete.tar.gz", "nosum.tar.gz");
        Files.delete(BackupStep.sumFile(noSum));
        assertTrue(BackupStep.inspect(noSum).problem().orElseThrow().startsWith("no " + BackupStep.sumFile(noSum)));
    }

    @Test void rotationKeepsTheNewestAndRemovesTheirSumFilesToo() throws Exception {
        for (String t : List.of("20261201T000000Z", "20261202T000000Z", "20261203T000000Z")) archive("complete.tar.gz", "lab-" + t + ".tar.gz");
        Files.writeString(tmp.resolve("notes.txt"), "mine");
        List<Path> removed = Backups.rotate(tmp, "lab", 2);
        assertEquals(List.of(tmp.resolve("lab-20261201T000000Z.tar.gz")), removed);
        assertTrue(Files.notExists(tmp.resolve("lab-20261201T000000Z.tar.gz.sha256")));
        assertTrue(Files.exists(tmp.resolve("lab-20261203T000000Z.tar.gz.sha256")));
        assertTrue(Files.exists(tmp.resolve("notes.txt")));
    }

    @Test void theWorkDirectoryMustBeWhatMktempMakes() {
        assertEquals("/var/tmp/gpuctl-backup.Ab3dE6gH", BackupStep.workDir("/var/tmp/gpuctl-backup.Ab3dE6gH\n"));
        assertThrows(IllegalArgumentException.class, () -> BackupStep.workDir("/"));
        assertThrows(IllegalArgumentException.class, () -> BackupStep.workDir("/var/tmp/gpuctl-backup.x; rm -rf /"));
    }

    @Test void theMasterScriptSnapshotsWithEtcdsOwnTlsAndCleansUpOnFailure() {
        String s = BackupStep.snapshotAndPack("{{backup.dir}}", "lab.tar.gz", "unix:///run/containerd/containerd.sock");
        assertTrue(s.startsWith("set -eu; umask 077; "), s);
        assertTrue(s.contains("crictl --runtime-endpoint unix:///run/containerd/containerd.sock ps --name '^etcd$' --state running -q"), s);
        assertTrue(s.contains("etcdctl --endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt"
            + " --cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key snapshot save"), s);
        assertTrue(s.contains("[ $st -eq 0 ] || rm -rf -- \"$d\""), s);
        assertTrue(s.endsWith("sha256sum lab.tar.gz >lab.tar.gz.sha256"), s);
        assertThrows(IllegalArgumentException.class, () -> new BackupStep(Path.of("/tmp/a b.tgz")));
    }
}
