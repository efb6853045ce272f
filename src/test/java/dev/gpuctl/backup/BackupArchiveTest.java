package dev.gpuctl.backup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;
import org.junit.jupiter.api.Test;

public class BackupArchiveTest {
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

    /** One member to write: a name, its tar type, its content or link target, its mode. */
    public record M(String name, byte type, String body, int mode) {
        public static M file(String name, String body) { return new M(name, TarConstants.LF_NORMAL, body, 0600); }
        public static M dir(String name) { return new M(name, TarConstants.LF_DIR, "", 0755); }
    }

    /** A gzip'd tar as an attacker (or GNU tar) could write it: pax headers for long names and big numbers. */
    public static byte[] tarGz(List<M> members) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (TarArchiveOutputStream out = new TarArchiveOutputStream(new GzipCompressorOutputStream(b))) {
            out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            out.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            for (M m : members) {
                TarArchiveEntry e = new TarArchiveEntry(m.name(), m.type(), true);
                byte[] body = m.body().getBytes(StandardCharsets.UTF_8);
                if (m.type() == TarConstants.LF_SYMLINK || m.type() == TarConstants.LF_LINK) e.setLinkName(m.body());
                else if (m.type() == TarConstants.LF_NORMAL) e.setSize(body.length);
                if (m.type() == TarConstants.LF_CHR) { e.setDevMajor(1); e.setDevMinor(3); }
                e.setMode(e.getMode() & ~07777 | m.mode());
                out.putArchiveEntry(e);
                if (m.type() == TarConstants.LF_NORMAL) out.write(body);
                out.closeArchiveEntry();
            }
        }
        return b.toByteArray();
    }

    public static List<M> complete() {
        return List.of(M.file(BackupArchive.SNAPSHOT, "snap"), M.dir("etc/kubernetes/pki/"), M.file("etc/kubernetes/pki/ca.crt", "crt"),
            M.file("etc/kubernetes/pki/ca.key", "key"), M.dir("etc/kubernetes/pki/etcd/"), M.file("etc/kubernetes/pki/etcd/ca.crt", "ecrt"),
            M.file("etc/kubernetes/pki/etcd/ca.key", "ekey"), M.file("etc/kubernetes/admin.conf", "conf"),
            M.file("etc/kubernetes/gpuctl/device-plugin-0a1b2c3d.yaml", "manifest"));
    }

    public static List<M> with(M extra) {
        List<M> all = new java.util.ArrayList<>(complete());
        all.add(extra);
        return all;
    }

    @Test void whatBackupWritesIsAcceptedAndRepackedMemberForMember() throws Exception {
        byte[] a = tarGz(complete());
        List<BackupArchive.Entry> e = BackupArchive.entries(a);
        assertEquals(List.of(), BackupArchive.refused(e));
        assertEquals(List.of(), BackupArchive.missing(e));
        byte[] again = BackupArchive.repack(a);
        assertEquals(e.stream().map(BackupArchive.Entry::name).toList(),
            BackupArchive.entries(again).stream().map(BackupArchive.Entry::name).toList());
    }

    @Test void anArchiveCarryingAnythingBackupDoesNotWriteIsRefusedNamingTheMember() throws Exception {
        record Case(M member, String says) {}
        List<Case> cases = List.of(
            new Case(M.file("etc/sudoers.d/x", "mallory ALL=(ALL) NOPASSWD: ALL\n"), "member 'etc/sudoers.d/x' is not a path gpuctl backup writes"),
            new Case(new M("etc/kubernetes/pki/front-proxy-ca.key", TarConstants.LF_SYMLINK, "/etc/shadow", 0777),
                "member 'etc/kubernetes/pki/front-proxy-ca.key' is a symbolic link (to /etc/shadow)"),
            new Case(new M("etc/kubernetes/pki/sa.key", TarConstants.LF_LINK, "etc/shadow", 0600),
                "member 'etc/kubernetes/pki/sa.key' is a hard link (to etc/shadow)"),
            new Case(M.file("etc/kubernetes/pki/../../sudoers.d/x", "x"), "member 'etc/kubernetes/pki/../../sudoers.d/x' has a '..' in its name"),
            new Case(M.file("../x", "x"), "member '../x' has a '..' in its name"),
            new Case(M.file("/etc/kubernetes/admin.conf", "x"), "member '/etc/kubernetes/admin.conf' has an absolute name"),
            new Case(new M("etc/kubernetes/pki/null", TarConstants.LF_CHR, "", 0666), "member 'etc/kubernetes/pki/null' is a character device"),
            new Case(M.dir("etc/sudoers.d/"), "member 'etc/sudoers.d' is not a path gpuctl backup writes"),
            new Case(new M("var/lib/kubelet/pki/kubelet-client-current.pem", TarConstants.LF_SYMLINK, "/etc/shadow", 0777),
                "member 'var/lib/kubelet/pki/kubelet-client-current.pem' is a symbolic link (to /etc/shadow)"));
        for (Case c : cases) {
            byte[] a = tarGz(with(c.member()));
            List<String> refused = BackupArchive.refused(BackupArchive.entries(a));
            assertEquals(1, refused.size(), c + ": " + refused);
            assertTrue(refused.get(0).startsWith(c.says()), c + ": " + refused);
            var e = assertThrows(BackupArchive.Refused.class, () -> BackupArchive.repack(a));
            assertTrue(e.getMessage().contains(c.says()), e.getMessage());
        }
    }

    @Test void anEarlierGpuctlsArchiveRestoresWithoutItsParentDirectoriesAndTheKubeletsCurrentLink() throws Exception {
        List<M> members = new java.util.ArrayList<>(List.of(M.dir("etc/"), M.dir("etc/kubernetes/"), M.dir("var/"), M.dir("var/lib/"),
            M.dir("var/lib/kubelet/"), M.dir("var/lib/kubelet/pki/"),
            M.file("var/lib/kubelet/pki/kubelet-client-2026-01-02-03-04-05.pem", "cert"),
            new M("var/lib/kubelet/pki/kubelet-client-current.pem", TarConstants.LF_SYMLINK,
                "/var/lib/kubelet/pki/kubelet-client-2026-01-02-03-04-05.pem", 0777)));
        members.addAll(complete());
        byte[] a = tarGz(members);
        assertEquals(List.of(), BackupArchive.refused(BackupArchive.entries(a)));
        List<String> uploaded = BackupArchive.entries(BackupArchive.repack(a)).stream().map(BackupArchive.Entry::name).toList();
        for (String gone : List.of("etc", "etc/kubernetes", "var", "var/lib", "var/lib/kubelet", "var/lib/kubelet/pki/kubelet-client-current.pem")) {
            assertFalse(uploaded.contains(gone), gone + " is left out of what the master gets: " + uploaded);
        }
        assertTrue(uploaded.contains("var/lib/kubelet/pki") && uploaded.contains("var/lib/kubelet/pki/kubelet-client-2026-01-02-03-04-05.pem"), uploaded.toString());
    }

    @Test void aPaxArchiveWithLongNamesReadsAndRepacksOnlyRegularFilesAndDirectoriesOwnedByRoot() throws Exception {
        String longName = "etc/kubernetes/gpuctl/" + "m".repeat(180) + ".yaml";
        List<M> members = with(new M(longName, TarConstants.LF_NORMAL, "long", 04755));
        byte[] a = tarGz(members);
        List<BackupArchive.Entry> e = BackupArchive.entries(a);
        BackupArchive.Entry entry = e.stream().filter(x -> x.name().equals(longName)).findFirst().orElseThrow();
        assertEquals(4, entry.size());
        assertTrue(entry.isFile());
        assertEquals(List.of(), BackupArchive.refused(e));
        List<BackupArchive.Entry> repacked = BackupArchive.entries(BackupArchive.repack(a));
        BackupArchive.Entry r = repacked.stream().filter(x -> x.name().equals(longName)).findFirst().orElseThrow();
        assertEquals(0755, r.mode(), "no set-id bit survives the repack");
        assertTrue(repacked.stream().filter(x -> x.name().equals("etc/kubernetes/pki")).allMatch(x -> x.type() == '5'));
    }
}
