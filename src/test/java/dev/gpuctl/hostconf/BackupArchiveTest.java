package dev.gpuctl.hostconf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BackupArchiveTest {
    static byte[] fixture(String name) throws IOException {
        try (InputStream in = BackupArchiveTest.class.getResourceAsStream("/backup/" + name)) {
            return in.readAllBytes();
        }
    }

    @Test void listsEveryMemberOfAGnuTarWithModesSizesAndLongNames() throws Exception {
        List<BackupArchive.Entry> e = BackupArchive.entries(fixture("complete.tar.gz"));
        assertEquals("etcd-snapshot.db", e.get(0).name());
        assertEquals(5, e.get(0).size());
        BackupArchive.Entry key = e.stream().filter(x -> x.name().equals("etc/kubernetes/pki/ca.key")).findFirst().orElseThrow();
        assertEquals(0600, key.mode());
        assertTrue(key.isFile());
        assertTrue(e.stream().anyMatch(x -> x.name().equals("etc/kubernetes/pki") && x.type() == '5'));
        assertTrue(e.stream().anyMatch(x -> x.name().equals("etc/kubernetes/manifests/" + "a".repeat(110) + ".yaml")),
            "a name longer than 100 bytes (GNU tar's ././@LongLink) is read whole");
        assertEquals(List.of(), BackupArchive.missing(e));
        String listing = BackupArchive.listing(e);
        assertTrue(listing.contains("-rw-------         34 etc/kubernetes/pki/ca.key\n"), listing);
        assertTrue(listing.contains("drwxr-xr-x          0 etc/kubernetes/pki\n"), listing);
        assertFalse(listing.contains("fixture"), "no content is listed");
    }

    @Test void anArchiveWithoutTheSnapshotLacksIt() throws Exception {
        assertEquals(List.of(BackupArchive.SNAPSHOT), BackupArchive.missing(BackupArchive.entries(fixture("no-snapshot.tar.gz"))));
    }

    @Test void bytesThatAreNoGzipTarAreRefusedWithAReason() {
        var e = assertThrows(BackupArchive.Unreadable.class, () -> BackupArchive.entries("not an archive".getBytes()));
        assertTrue(e.getMessage().startsWith("not a gzip'd tar"), e.getMessage());
    }

    @Test void namesSortByTimeAndRotationRemovesOnlyThisClustersOldest() {
        assertEquals("lab-20261204T061500Z.tar.gz", BackupArchive.fileName("lab", Instant.parse("2026-12-04T06:15:00Z")));
        List<String> names = List.of("lab-20261201T000000Z.tar.gz", "lab-20261201T000000Z.tar.gz.sha256", "lab-20261203T000000Z.tar.gz",
            "lab-20261202T000000Z.tar.gz", "lab-20261130T000000Z.tar.gz", "other-20261101T000000Z.tar.gz", "lab-notes.txt");
        assertEquals(List.of("lab-20261130T000000Z.tar.gz", "lab-20261201T000000Z.tar.gz"), BackupArchive.toRemove(names, "lab", 2));
        assertEquals(List.of(), BackupArchive.toRemove(names, "lab", 4));
        assertEquals(List.of(), BackupArchive.toRemove(names, "la", 1), "a cluster named as another's prefix removes none of its");
    }

    @Test void sha256LineIsSha256sumsAndIsFoundByName() {
        String hex = BackupArchive.sha256("abc".getBytes());
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex);
        String line = BackupArchive.sha256Line(hex, "lab.tar.gz");
        assertEquals(hex + "  lab.tar.gz\n", line);
        assertEquals(Optional.of(hex), BackupArchive.digestFor(line, "lab.tar.gz"));
        assertEquals(Optional.of(hex), BackupArchive.digestFor(hex + " *lab.tar.gz\n", "lab.tar.gz"), "binary-mode line");
        assertEquals(Optional.empty(), BackupArchive.digestFor(line, "other.tar.gz"));
    }

    @Test void safeNamesOnly() {
        assertTrue(BackupArchive.safeName("lab-20261204T061500Z.tar.gz"));
        assertFalse(BackupArchive.safeName("a b.tgz"));
        assertFalse(BackupArchive.safeName("$(reboot).tgz"));
        assertFalse(BackupArchive.safeName(".hidden"));
        assertFalse(BackupArchive.safeName("x.tar.gz.sha256"));
    }
}
