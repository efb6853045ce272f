package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDateTime;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** .gpuctl/ is this user's private directory, or refused; every file 0600; one log directory per run. */
class StateDirTest {
    @TempDir Path dir;

    static String mode(Path p) throws Exception { return PosixFilePermissions.toString(Files.getPosixFilePermissions(p)); }

    @Test void directoriesAre0700AndFiles0600() throws Exception {
        Path state = dir.resolve(".gpuctl");
        StateDir.writePrivate(state.resolve("lab").resolve("admin.conf"), "x".getBytes());
        assertEquals("rwx------", mode(state));
        assertEquals("rwx------", mode(state.resolve("lab")));
        assertEquals("rw-------", mode(state.resolve("lab").resolve("admin.conf")));
        // an existing .gpuctl that was too open is closed
        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwxr-xr-x"));
        StateDir.ensurePrivateDir(state.resolve("logs"));
        assertEquals("rwx------", mode(state));
    }

    @Test void aGpuctlThatIsALinkIsRefusedAndNothingIsWrittenWhereItPoints() throws Exception {
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Files.createSymbolicLink(dir.resolve(".gpuctl"), elsewhere);
        StateDir.Refused e = assertThrows(StateDir.Refused.class,
            () -> StateDir.writePrivate(dir.resolve(".gpuctl/lab/admin.conf"), "secret".getBytes()));
        assertTrue(e.getMessage().contains(dir.resolve(".gpuctl") + " is a symbolic link (to " + elsewhere + ")"), e.getMessage());
        assertTrue(e.getMessage().contains("remove the link"), e.getMessage());
        try (var s = Files.list(elsewhere)) {
            assertEquals(0, s.count(), "nothing written through the link");
        }
    }

    @Test void aLinkInsideGpuctlIsRefusedToo() throws Exception {
        Path state = Files.createDirectory(dir.resolve(".gpuctl"));
        Files.createSymbolicLink(state.resolve("logs"), Files.createDirectory(dir.resolve("other")));
        assertThrows(StateDir.Refused.class, () -> StateDir.newRunDir(state, ""));
    }

    @Test void aDirectoryOfAnotherUserIsRefusedNamingTheOwner() throws Exception {
        Path state = Files.createDirectory(dir.resolve(".gpuctl"));
        assertEquals(Optional.empty(), StateDir.problem(state, StateDir.myUid()));
        String why = StateDir.problem(state, StateDir.myUid() + 1).orElseThrow();
        assertTrue(why.startsWith(state + " belongs to " + System.getProperty("user.name") + ", not to "), why);
        assertTrue(why.contains("another user could read or replace the cluster's credentials"), why);
    }

    @Test void aRefusedStateDirIsExit2WithTheMessage() throws Exception {
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Files.createSymbolicLink(dir.resolve(".gpuctl"), elsewhere);
        Process keygen = new ProcessBuilder("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.resolve("id").toString())
            .redirectErrorStream(true).start();
        assertEquals(0, keygen.waitFor());
        Path inv = Files.writeString(dir.resolve("inventory.yaml"), """
            cluster: { name: lab, kubernetesVersion: "1.35", runtime: docker, packages: system }
            ssh: { identityFile: %s, knownHosts: %s }
            nodes:
              - { name: m, address: 127.0.0.1, role: master }
            """.formatted(dir.resolve("id"), Files.writeString(dir.resolve("kh"), "")));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new String[] {"bootstrap", "--dry-run", inv.toString()}, new PrintWriter(out), new PrintWriter(err), Map.of("HOME", dir.toString()));
        assertEquals(2, code, () -> out + "\n" + err);
        assertTrue(err.toString().startsWith("gpuctl: refusing to use gpuctl's state directory: " + dir.resolve(".gpuctl") + " is a symbolic link"), err::toString);
        try (var s = Files.list(elsewhere)) {
            assertEquals(0, s.count());
        }
    }

    @Test void twoRunsInTheSameSecondGetTwoLogDirectories() throws Exception {
        Path state = dir.resolve(".gpuctl");
        Path a = StateDir.newRunDir(state, "");
        Path b = StateDir.newRunDir(state, "");
        Path c = StateDir.newRunDir(state, "verify");
        assertNotEquals(a, b);
        assertTrue(Files.isDirectory(a) && Files.isDirectory(b) && Files.isDirectory(c));
        assertEquals("rwx------", mode(a));
        LocalDateTime t = LocalDateTime.of(2026, 12, 2, 10, 15, 0);
        assertEquals("20261202-101500", StateDir.runDirName(t, "", 1));
        assertEquals("20261202-101500-2", StateDir.runDirName(t, "", 2));
        assertEquals("20261202-101500-verify-3", StateDir.runDirName(t, "verify", 3));
    }
}
