package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A backup's --out: a new 0600 file, made exclusively, in a directory whose mode is never changed. */
class NewPrivateFileTest {
    static int mode(Path p) throws Exception {
        return ((Number) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)).intValue() & 07777;
    }

    static void chmod(Path p, int mode) throws Exception {
        // Files.setPosixFilePermissions cannot set the sticky bit
        Process pr = new ProcessBuilder("chmod", String.format("%04o", mode), p.toString()).inheritIO().start();
        assertEquals(0, pr.waitFor());
        assertEquals(mode, mode(p));
    }

    @Test void aStickyWorldWritableDirectoryLikeTmpKeepsItsModeAndTheFileIsPrivate(@TempDir Path dir) throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        chmod(tmp, 01777);
        Path file = tmp.resolve("x.tar.gz");
        NewPrivateFile.write(file, "archive".getBytes());
        assertEquals(01777, mode(tmp), "the directory keeps its mode and its sticky bit");
        assertEquals(0600, mode(file));
        assertEquals("archive", Files.readString(file));
    }

    @Test void aWorldWritableDirectoryWithoutTheStickyBitIsRefusedWithNothingWritten(@TempDir Path dir) throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        chmod(open, 0777);
        var e = assertThrows(StateDir.Refused.class, () -> NewPrivateFile.write(open.resolve("x.tar.gz"), "a".getBytes()));
        assertTrue(e.getMessage().contains(open + " is writable by others (mode 0777) and not sticky"), e.getMessage());
        assertEquals(0777, mode(open));
        assertFalse(Files.exists(open.resolve("x.tar.gz")));
        Path below = open.resolve("mine");
        var deeper = assertThrows(StateDir.Refused.class, () -> NewPrivateFile.check(below.resolve("x.tar.gz")));
        assertTrue(deeper.getMessage().contains(open + " is writable by others"), "a directory above counts too: " + deeper.getMessage());
        assertFalse(Files.exists(below), "nothing made");
    }

    @Test void anExistingFileIsNeitherOverwrittenNorIsALinkPlantedAtThePathFollowed(@TempDir Path dir) throws Exception {
        Path existing = Files.writeString(dir.resolve("x.tar.gz"), "mine");
        var e = assertThrows(StateDir.Refused.class, () -> NewPrivateFile.write(existing, "theirs".getBytes()));
        assertTrue(e.getMessage().contains(existing + " exists; nothing was written"), e.getMessage());
        assertEquals("mine", Files.readString(existing));

        Path victim = Files.writeString(dir.resolve("victim"), "untouched");
        Path link = Files.createSymbolicLink(dir.resolve("y.tar.gz"), victim);
        var l = assertThrows(StateDir.Refused.class, () -> NewPrivateFile.write(link, "archive".getBytes()));
        assertTrue(l.getMessage().contains(link + " is a symbolic link"), l.getMessage());
        assertEquals("untouched", Files.readString(victim));
        Path dangling = Files.createSymbolicLink(dir.resolve("z.tar.gz"), dir.resolve("nowhere"));
        assertThrows(StateDir.Refused.class, () -> NewPrivateFile.write(dangling, "archive".getBytes()));
        assertFalse(Files.exists(dir.resolve("nowhere")), "a dangling link is not followed either");
    }

    @Test void directoriesItMakesAre0700AndExistingOnesKeepTheirMode(@TempDir Path dir) throws Exception {
        Path mine = Files.createDirectory(dir.resolve("mine"));
        chmod(mine, 0755);
        Path file = mine.resolve("a/b/x.tar.gz");
        NewPrivateFile.check(file);
        assertFalse(Files.exists(mine.resolve("a")), "a check makes nothing (backup --dry-run)");
        NewPrivateFile.write(file, "archive".getBytes());
        assertEquals(0700, mode(mine.resolve("a")));
        assertEquals(0700, mode(mine.resolve("a/b")));
        assertEquals(0755, mode(mine), "an existing directory's mode is never changed");
        assertEquals(0600, mode(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test void whoMayWriteADirectory() {
        Path d = Path.of("/d");
        assertEquals(Optional.empty(), NewPrivateFile.problem(new NewPrivateFile.Dir(d, 1000, 1000, 0700), 1000, 1000));
        assertEquals(Optional.empty(), NewPrivateFile.problem(new NewPrivateFile.Dir(d, 0, 0, 01777), 1000, 1000), "/tmp");
        assertEquals(Optional.empty(), NewPrivateFile.problem(new NewPrivateFile.Dir(d, 1000, 1000, 0775), 1000, 1000),
            "group-writable by the user's own group");
        assertTrue(NewPrivateFile.problem(new NewPrivateFile.Dir(d, 1000, 50, 0775), 1000, 1000).orElseThrow()
            .contains("writable by others (mode 0775)"), "group-writable by another group");
        assertTrue(NewPrivateFile.problem(new NewPrivateFile.Dir(d, 1000, 1000, 0777), 1000, 1000).isPresent());
        assertTrue(NewPrivateFile.problem(new NewPrivateFile.Dir(d, 1001, 1001, 0700), 1000, 1000).orElseThrow()
            .contains("belongs to another user (uid 1001)"));
    }
}
