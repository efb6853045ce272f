package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.engine.MasterLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Remote#hold} on this machine (the same contract SshRemote keeps over SSH, tested on the bed), and the
 * bootstrap lock's real shell command: one holder at a time, the holder named, and no stale lock after the
 * holder dies.
 */
class LocalHoldTest {
    @TempDir Path dir;
    // "root" here only means: run sh -c directly (no sudo); the lock lives in a temp dir this user owns
    final LocalRemote local = new LocalRemote("here", true);

    String lockCommand(String who) {
        return MasterLock.command(who, dir.toString());
    }

    @Test
    void aHeldCommandRunsUntilClosedAndAnEndedOneBringsItsExitStatus() throws Exception {
        Path gone = dir.resolve("gone");
        Held h = local.hold("echo ready; cat >/dev/null; touch " + gone, Duration.ofSeconds(10));
        assertTrue(h.isRunning());
        assertEquals("ready", h.output());
        Thread.sleep(200);
        assertFalse(Files.exists(gone), "still running: its stdin is open");
        h.close();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!Files.exists(gone) && System.nanoTime() < deadline) Thread.sleep(20);
        assertTrue(Files.exists(gone), "closing the handle ends the command (end of file on its stdin)");

        Held ended = local.hold("printf 'no newline'; exit 3", Duration.ofSeconds(10));
        assertFalse(ended.isRunning());
        assertEquals("no newline", ended.output());
        assertEquals(3, ended.exit());
    }

    @Test
    void silenceBeyondTheTimeoutIsATimeout() {
        RemoteException e = assertThrows(RemoteException.class, () -> local.hold("sleep 30", Duration.ofMillis(300)));
        assertEquals(RemoteException.Kind.TIMEOUT, e.kind());
    }

    @Test
    void theLockHasOneHolderNamesItAndIsFreeAgainWhenTheHolderCloses() {
        String alice = MasterLock.holder("alice", "laptop", 4242, Instant.parse("2026-12-02T10:00:00Z"));
        var first = MasterLock.acquireWith(local, lockCommand(alice), Duration.ofSeconds(10));
        MasterLock.Acquired held = assertInstanceOf(MasterLock.Acquired.class, first);

        var second = MasterLock.acquireWith(local, lockCommand("bob"), Duration.ofSeconds(10));
        MasterLock.Busy busy = assertInstanceOf(MasterLock.Busy.class, second);
        assertTrue(busy.message().contains("another gpuctl bootstrap is running against this cluster"), busy.message());
        assertTrue(busy.message().contains("gpuctl bootstrap by alice@laptop (pid 4242) since 2026-12-02T10:00:00Z"), busy.message());
        assertTrue(busy.message().matches("(?s).*lock held by pid \\d+ on this host.*"), busy.message());

        held.held().close();
        var third = awaitAcquired("bob");
        third.held().close();
    }

    @Test
    void aHolderThatDiesLeavesNoStaleLock() throws Exception {
        MasterLock.Acquired held = assertInstanceOf(MasterLock.Acquired.class,
            MasterLock.acquireWith(local, lockCommand("doomed"), Duration.ofSeconds(10)));
        String who = Files.readString(dir.resolve("bootstrap.holder"));
        long pid = Long.parseLong(who.replaceAll("(?s).*lock held by pid (\\d+).*", "$1"));
        // the process that holds the lock is killed outright (as when gpuctl or its connection dies)
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();
        awaitAcquired("next").held().close();
        held.held().close();
    }

    /** Every path under dir (links not followed) with its type, mode, mtime and content: equal means nothing was written. */
    static String snapshot(Path dir) throws Exception {
        StringBuilder sb = new StringBuilder();
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted().toList()) {
                var a = Files.readAttributes(p, java.nio.file.attribute.PosixFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
                sb.append(p).append(' ').append(a.isSymbolicLink() ? "link" : a.isDirectory() ? "dir" : "file").append(' ')
                    .append(java.nio.file.attribute.PosixFilePermissions.toString(a.permissions())).append(' ').append(a.lastModifiedTime());
                if (a.isRegularFile()) sb.append(' ').append(Files.readString(p));
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    /** Takes the lock at {@code lockDir}; asserts it is refused for {@code why} and that nothing under dir changed. */
    void refused(Path lockDir, String why) throws Exception {
        String before = snapshot(dir);
        var o = MasterLock.acquireWith(local, MasterLock.command("mallory-proof", lockDir.toString()), Duration.ofSeconds(10));
        MasterLock.Busy b = assertInstanceOf(MasterLock.Busy.class, o);
        assertTrue(b.message().startsWith("here: refusing the bootstrap lock: ") && b.message().contains(why), b.message());
        assertTrue(b.message().contains("nothing was opened or written") && b.message().contains("rm -r /run/gpuctl"), b.message());
        assertEquals(before, snapshot(dir), "nothing was written");
    }

    @Test
    void theLocksDirectoryIsMadePrivateAndItsFilesAreRegularAndPrivate() throws Exception {
        Path d = dir.resolve("gpuctl");
        MasterLock.Acquired held = assertInstanceOf(MasterLock.Acquired.class,
            MasterLock.acquireWith(local, MasterLock.command("me", d.toString()), Duration.ofSeconds(10)));
        try {
            assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(d)));
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(d.resolve("bootstrap.holder"))));
        } finally {
            held.held().close();
        }
    }

    @Test
    void aLinkInPlaceOfTheDirectoryIsRefusedAndNothingIsWrittenThroughIt() throws Exception {
        Path target = Files.createDirectory(dir.resolve("root-only"));
        Files.writeString(target.resolve("bootstrap.holder"), "precious\n");
        refused(Files.createSymbolicLink(dir.resolve("gpuctl"), target), "is a symbolic link");
    }

    @Test
    void aDirectoryOthersMayWriteOrAFileThatIsNotIsRefused() throws Exception {
        Path open = Files.createDirectory(dir.resolve("gpuctl"));
        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        refused(open, "has mode 777: writable by group or others");

        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        Path precious = Files.writeString(dir.resolve("precious"), "root's\n");
        Files.createSymbolicLink(open.resolve("bootstrap.holder"), precious);
        refused(open, "/bootstrap.holder is a symbolic link");
        Files.delete(open.resolve("bootstrap.holder"));

        Files.createDirectory(open.resolve("bootstrap.lock"));
        refused(open, "/bootstrap.lock is not a regular file");
    }

    @Test
    void aDirectoryOfAnotherUserIsRefused() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(LocalRemote.isRoot(), "chown needs root");
        Path theirs = Files.createDirectory(dir.resolve("gpuctl"));
        Files.setAttribute(theirs, "unix:uid", 65534);
        refused(theirs, "is owned by uid 65534, not uid 0");
    }

    MasterLock.Acquired awaitAcquired(String who) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        MasterLock.Outcome o;
        do {
            o = MasterLock.acquireWith(local, lockCommand(who), Duration.ofSeconds(10));
        } while (o instanceof MasterLock.Busy && System.nanoTime() < deadline);
        return assertInstanceOf(MasterLock.Acquired.class, o, o::toString);
    }
}
