package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Role;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.remote.RemoteException.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalRemoteTest {
    static final Duration T = Duration.ofSeconds(30);
    @TempDir Path dir;

    static Node localNode() {
        SshSettings ssh = new SshSettings("root", 22, Path.of("/nonexistent/id"), Path.of("/nonexistent/kh"),
            Optional.empty(), Optional.empty());
        return new Node("here", "127.0.0.1", Role.MASTER, false, Map.of(), ssh, "local");
    }

    static Remote open() {
        assumeTrue(LocalRemote.isRoot(), "LocalRemote tests run as root (else they would need sudo -n)");
        return Remotes.open(localNode(), SshOptions.defaults(false));
    }

    static Set<String> tmpLeftovers() throws Exception {
        try (Stream<Path> s = Files.list(Path.of("/tmp"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".gpuctl-")).collect(Collectors.toSet());
        }
    }

    @Test
    void execReturnsBothStreamsAndTheExitExactly() {
        try (Remote r = open()) {
            assertInstanceOf(LocalRemote.class, r);
            assertEquals("here", r.name());
            ExecResult res = r.exec("printf 'out\\n'; printf 'err' >&2; exit 3", T);
            assertEquals(new ExecResult(3, "out\n", "err"), res);
            assertEquals("it's $HOME\n", r.exec("echo 'it'\\''s' '$HOME'", T).stdout());
            assertEquals("", r.exec("cat", T).stdout(), "stdin is closed");
            assertEquals(137, r.exec("kill -9 $$", T).exit(), "a signal reads as 128+N");
        }
    }

    @Test
    void anOutputOverTheCapKeepsItsStartAndEndAndSaysHowMuchWasCut() {
        try (Remote r = open()) {
            ExecResult res = r.exec("head -c 20000000 /dev/zero | tr '\\0' a; echo; echo the last line >&2; echo end",
                Duration.ofSeconds(60));
            assertEquals(0, res.exit());
            assertTrue(res.stdout().startsWith("aaaa"));
            assertTrue(res.stdout().contains("\n[… " + (20_000_005 - StreamPump.CAP) + " bytes cut]\n"), res.stdout().substring(2_097_000, 2_097_200));
            assertTrue(res.stdout().endsWith("aaaa\nend\n"));
            assertEquals(StreamPump.CAP + StreamPump.cutMarker(20_000_005 - StreamPump.CAP).getBytes(java.nio.charset.StandardCharsets.UTF_8).length,
                res.stdout().getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
            assertEquals("the last line\n", res.stderr());
        }
    }

    @Test
    void bigOutputOnBothStreamsAtOnceDoesNotDeadlock() {
        try (Remote r = open()) {
            ExecResult res = r.exec("head -c 4000000 /dev/zero | tr '\\0' a & head -c 4000000 /dev/zero | tr '\\0' b >&2; wait",
                Duration.ofSeconds(60));
            assertEquals(0, res.exit());
            assertEquals(4_000_000, res.stdout().length());
            assertEquals(4_000_000, res.stderr().length());
            assertTrue(res.stdout().chars().allMatch(c -> c == 'a'));
            assertTrue(res.stderr().chars().allMatch(c -> c == 'b'));
        }
    }

    @Test
    void timeoutNamesTheCommandAndKillsIt() throws Exception {
        try (Remote r = open()) {
            Path marker = dir.resolve("still-running");
            long t0 = System.nanoTime();
            RemoteException e = assertThrows(RemoteException.class,
                () -> r.exec("sleep 2; touch " + marker + "; sleep 30", Duration.ofMillis(500)));
            assertTrue(System.nanoTime() - t0 < 10_000_000_000L);
            assertEquals(Kind.TIMEOUT, e.kind());
            assertTrue(e.getMessage().contains("`sleep 2; touch " + marker + "; sleep 30`"), e.getMessage());
            Thread.sleep(2500);
            assertFalse(Files.exists(marker), "the command was not killed");
        }
    }

    @Test
    void uploadWritesContentModeAndOwnerAndLeavesNothingInTmp() throws Exception {
        try (Remote r = open()) {
            Set<String> before = tmpLeftovers();
            Path target = dir.resolve("etc/thing's.conf");
            Files.createDirectories(target.getParent());
            Files.writeString(target, "old");
            r.upload("new\ncontent\n".getBytes(), target.toString(), "0640", "root:daemon");
            assertEquals("new\ncontent\n", Files.readString(target));
            assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
            assertEquals("daemon", Files.readAttributes(target, java.nio.file.attribute.PosixFileAttributes.class).group().getName());
            assertFalse(Files.exists(Path.of(target + ".gpuctl-tmp")));
            assertEquals(before, tmpLeftovers());
            RemoteException e = assertThrows(RemoteException.class,
                () -> r.upload(new byte[] {1}, dir.resolve("no/such/dir/f").toString(), "0644", "root"));
            assertEquals(Kind.IO, e.kind());
            assertEquals(before, tmpLeftovers());
        }
    }

    @Test
    void filesStreamToAndFromLocalFilesAndAFileOverTheCapIsRefusedInMemory() throws Exception {
        try (Remote r = open()) {
            Path local = dir.resolve("big.local");
            byte[] data = new byte[StreamPump.CAP + 1000];
            new Random(9).nextBytes(data);
            Files.write(local, data);
            Path onHost = dir.resolve("big.host");
            r.upload(local, onHost.toString(), "0600", "root");
            assertArrayEquals(data, Files.readAllBytes(onHost));
            Path back = dir.resolve("big.back");
            r.download(onHost.toString(), back);
            assertArrayEquals(data, Files.readAllBytes(back));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(back)));
            RemoteException big = assertThrows(RemoteException.class, () -> r.download(onHost.toString()));
            assertTrue(big.getMessage().contains("larger than 4 MiB"), big.getMessage());
            Path link = dir.resolve("link.back");
            Files.createSymbolicLink(link, dir.resolve("elsewhere"));
            RemoteException refused = assertThrows(RemoteException.class, () -> r.download(onHost.toString(), link));
            assertTrue(refused.getMessage().contains("not a regular file"), refused.getMessage());
            assertFalse(Files.exists(dir.resolve("elsewhere")), "a link is never followed");
        }
    }

    @Test
    void downloadRoundTripsBinary() throws Exception {
        try (Remote r = open()) {
            byte[] data = new byte[300_000];
            new Random(7).nextBytes(data);
            Path f = dir.resolve("blob");
            r.upload(data, f.toString(), "0600", "root");
            assertArrayEquals(data, r.download(f.toString()));
            RemoteException e = assertThrows(RemoteException.class, () -> r.download(dir.resolve("missing").toString()));
            assertEquals(Kind.IO, e.kind());
            assertTrue(e.getMessage().contains("No such file"), e.getMessage());
        }
    }
}
