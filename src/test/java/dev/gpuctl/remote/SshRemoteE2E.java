package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gpuctl.inventory.Bastion;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.Role;
import dev.gpuctl.inventory.SshSettings;
import dev.gpuctl.remote.RemoteException.Kind;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SshRemote against a real OpenSSH sshd on 127.0.0.1 (a free port, a temp config and temp keys), started
 * here and stopped by its PID. Needs root and /usr/sbin/sshd (Debian: apt-get install openssh-server sudo).
 * Two throwaway users are made for the non-root cases and removed afterwards.
 */
class SshRemoteE2E {
    static final String SSHD = "/usr/sbin/sshd";
    static final String USER_NOPW = "gpuctl-e2e-nopw";
    static final String USER_SUDO = "gpuctl-e2e-sudo";
    static final Path SUDOERS = Path.of("/etc/sudoers.d/gpuctl-e2e");
    static final Duration T = Duration.ofSeconds(30);

    @TempDir static Path dir;
    static Process sshd;
    static int port;
    static Path id;
    static Path wrongId;
    static String hostLine;
    static String hostFp;
    static boolean usersMade;
    static Path keysDir;
    final List<Remote> open = new ArrayList<>();

    @BeforeAll
    static void startSshd() throws Exception {
        assumeTrue(LocalRemote.isRoot(), "SshRemoteE2E runs as root (sshd, throwaway users)");
        if (!Files.isExecutable(Path.of(SSHD))) fail(SSHD + " is missing: apt-get install -y openssh-server");
        keygen(dir.resolve("host_ed25519"));
        keygen(dir.resolve("id_ed25519"));
        keygen(dir.resolve("wrong_ed25519"));
        id = dir.resolve("id_ed25519");
        wrongId = dir.resolve("wrong_ed25519");
        // sshd reads authorized_keys as the user logging in: it must be readable by the throwaway users too
        keysDir = Files.createTempDirectory("gpuctl-e2e-keys");
        Files.setPosixFilePermissions(keysDir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.copy(dir.resolve("id_ed25519.pub"), keysDir.resolve("authorized_keys"));
        Files.setPosixFilePermissions(keysDir.resolve("authorized_keys"), PosixFilePermissions.fromString("rw-r--r--"));
        String pub = Files.readString(dir.resolve("host_ed25519.pub")).strip();
        hostFp = Fingerprints.keyOfLine("x " + pub).orElseThrow().fingerprint();
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        hostLine = "[127.0.0.1]:" + port + " " + pub.split(" ")[0] + " " + pub.split(" ")[1];
        Files.createDirectories(Path.of("/run/sshd"));
        Files.writeString(dir.resolve("sshd_config"), String.join("\n",
            "Port " + port,
            "ListenAddress 127.0.0.1",
            "HostKey " + dir.resolve("host_ed25519"),
            "PidFile " + dir.resolve("sshd.pid"),
            "AuthorizedKeysFile " + keysDir.resolve("authorized_keys"),
            "PermitRootLogin yes",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "AllowTcpForwarding yes",
            "LogLevel VERBOSE",
            "Subsystem sftp /usr/lib/openssh/sftp-server",
            ""));
        sshd = new ProcessBuilder(SSHD, "-D", "-e", "-f", dir.resolve("sshd_config").toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("sshd.log").toFile()).start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                break;
            } catch (IOException e) {
                if (!sshd.isAlive() || System.nanoTime() > until) {
                    fail("sshd did not start: " + Files.readString(dir.resolve("sshd.log")));
                }
                Thread.sleep(50);
            }
        }
        usersMade = makeUsers();
    }

    /** The two throwaway users; false (and those cases skipped) when this machine cannot make them. */
    static boolean makeUsers() throws Exception {
        if (!Files.isExecutable(Path.of("/usr/sbin/useradd")) || !Files.isExecutable(Path.of("/usr/bin/sudo"))) return false;
        removeUsers();
        for (String u : List.of(USER_NOPW, USER_SUDO)) {
            // '*' rather than useradd's locked '!': sshd without PAM refuses locked accounts even with a key
            if (run("useradd", "-M", "-d", "/", "-s", "/bin/sh", "-p", "*", u) != 0) return false;
        }
        Files.writeString(SUDOERS, USER_SUDO + " ALL=(ALL) NOPASSWD: ALL\n");
        Files.setPosixFilePermissions(SUDOERS, PosixFilePermissions.fromString("r--r-----"));
        return true;
    }

    static void removeUsers() throws Exception {
        Files.deleteIfExists(SUDOERS);
        for (String u : List.of(USER_NOPW, USER_SUDO)) {
            if (run("id", u) == 0) run("userdel", u);
        }
    }

    @AfterAll
    static void stopSshd() throws Exception {
        if (sshd != null) {
            sshd.descendants().forEach(ProcessHandle::destroy);
            sshd.destroy();
            if (!sshd.waitFor(5, TimeUnit.SECONDS)) sshd.destroyForcibly();
        }
        if (usersMade) removeUsers();
        if (keysDir != null) {
            Files.deleteIfExists(keysDir.resolve("authorized_keys"));
            Files.deleteIfExists(keysDir);
        }
    }

    @AfterEach
    void closeAll() {
        open.forEach(Remote::close);
    }

    static void keygen(Path file) throws Exception {
        assertEquals(0, run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "e2e", "-f", file.toString()));
    }

    static int run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor();
    }

    static Node node(String user, Path identity, Path knownHosts, Optional<String> pin, int p, Optional<Bastion> bastion) {
        return new Node("e2e", "127.0.0.1", Role.WORKER, false, Map.of(),
            new SshSettings(user, p, identity, knownHosts, bastion, pin), "ssh");
    }

    Path knownHosts() throws IOException {
        Path kh = Files.createTempFile(dir, "known_hosts", "");
        Files.writeString(kh, hostLine + "\n");
        return kh;
    }

    static SshOptions opts(boolean acceptNew) {
        return new SshOptions(Duration.ofSeconds(5), Duration.ofSeconds(5), acceptNew, null);
    }

    Remote connect(Node n, boolean acceptNew) {
        Remote r = Remotes.open(n, opts(acceptNew));
        open.add(r);
        return r;
    }

    Remote root() throws IOException {
        return connect(node("root", id, knownHosts(), Optional.empty(), port, Optional.empty()), false);
    }

    static RemoteException refused(Node n, boolean acceptNew) {
        return assertThrows(RemoteException.class, () -> SshRemote.connect(n, opts(acceptNew)).close());
    }

    /**
     * The upload's own temporary files (".gpuctl-" and 12 random bytes in hex, SftpUpload): only those, so that another
     * process's temporary file in /tmp meanwhile (LocalRemote's in a unit test run beside) is not taken for a leftover.
     */
    private static final java.util.regex.Pattern UPLOAD_TMP = java.util.regex.Pattern.compile("\\.gpuctl-[0-9a-f]{24}");

    static Set<String> tmpLeftovers() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/tmp"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> UPLOAD_TMP.matcher(n).matches()).collect(Collectors.toSet());
        }
    }

    static String localSh(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    // ---- commands ----

    @Test
    void execReturnsStdoutStderrAndExitExactly() throws Exception {
        Remote r = root();
        assertInstanceOf(SshRemote.class, r);
        assertEquals(new ExecResult(7, "out\nline 2\n", "err"), r.exec("printf 'out\\nline 2\\n'; printf err >&2; exit 7", T));
        assertEquals("0\n", r.exec("id -u", T).stdout());
        assertEquals("", r.exec("cat", T).stdout(), "stdin is closed");
        String nasty = "x='it'\"'\"'s $HOME'; printf '%s|' \"$x\" \"`echo back`\" \"$(echo dollar)\" '\\\\'\necho\necho \"ünï\"";
        assertEquals(localSh(nasty), r.exec(nasty, T).stdout());
        assertEquals(143, r.exec("kill -TERM $$", T).exit(), "a signal reads as 128+N");
    }

    @Test
    void bigOutputOnBothStreamsAtOnceDoesNotDeadlock() throws Exception {
        Remote r = root();
        ExecResult res = r.exec("head -c 4000000 /dev/zero | tr '\\0' a & head -c 4000000 /dev/zero | tr '\\0' b >&2; wait",
            Duration.ofSeconds(120));
        assertEquals(0, res.exit(), res.tail(3));
        assertEquals(4_000_000, res.stdout().length());
        assertEquals(4_000_000, res.stderr().length());
        assertTrue(res.stdout().chars().allMatch(c -> c == 'a'));
        assertTrue(res.stderr().chars().allMatch(c -> c == 'b'));
    }

    @Test
    void timeoutFiresNamesTheCommandAndTheConnectionStaysUsable() throws Exception {
        Remote r = root();
        long t0 = System.nanoTime();
        RemoteException e = assertThrows(RemoteException.class, () -> r.exec("sleep 30; echo never", Duration.ofSeconds(1)));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15), "took too long to time out");
        assertEquals(Kind.TIMEOUT, e.kind());
        assertTrue(e.getMessage().contains("`sleep 30; echo never`"), e.getMessage());
        assertEquals("ok\n", r.exec("echo ok", T).stdout());
    }

    @Test
    void connectionLostMidCommand() throws Exception {
        Remote r = root();
        CompletableFuture<ExecResult> running = CompletableFuture.supplyAsync(() -> r.exec("sleep 30", T));
        Thread.sleep(1000);
        // this connection's sshd processes are children of the sshd this test started
        sshd.descendants().forEach(ProcessHandle::destroyForcibly);
        Throwable t = assertThrows(Exception.class, () -> running.get(20, TimeUnit.SECONDS)).getCause();
        RemoteException e = assertInstanceOf(RemoteException.class, t);
        assertEquals(Kind.CONNECTION_LOST, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("`sleep 30`"), e.getMessage());
    }

    // ---- hostile hosts: huge output, silence ----

    /** The heap in use now, after a full collection: what is retained, not what is garbage. */
    static long retainedHeap() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    /** This JVM's resident set now and at its peak (VmRSS, VmHWM of /proc/self/status), in MiB. */
    static String rss() throws IOException {
        String status = Files.readString(Path.of("/proc/self/status"));
        String now = status.lines().filter(l -> l.startsWith("VmRSS:")).findFirst().orElse("VmRSS: ?");
        String peak = status.lines().filter(l -> l.startsWith("VmHWM:")).findFirst().orElse("VmHWM: ?");
        return now.replaceAll("\\s+", " ") + ", peak " + peak.replaceAll("\\s+", " ");
    }

    @Test
    void aHugeOutputIsCutAndSaidSoWhileTheHeapStaysBounded() throws Exception {
        Remote r = root();
        long before = retainedHeap();
        long t0 = System.nanoTime();
        ExecResult res = r.exec("head -c 300000000 /dev/zero; echo; echo the end", Duration.ofMinutes(5));
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        long after = retainedHeap();
        long extra = after - before;
        System.out.printf("300 MB of output in %d s: kept %d chars; heap retained %d MiB more than before; %s%n",
            seconds, res.stdout().length(), extra >> 20, rss());
        assertEquals(0, res.exit(), res.tail(3));
        long cut = 300_000_000L + 1 + "the end\n".length() - StreamPump.CAP;
        assertTrue(res.stdout().contains("\n[… " + cut + " bytes cut]\n"), "the cut is said in the output");
        assertTrue(res.stdout().endsWith("\nthe end\n"), "the end of the output is kept");
        assertTrue(res.stdout().length() <= StreamPump.CAP + 64, "kept " + res.stdout().length());
        assertTrue(extra < 256L << 20, "the heap grew by " + (extra >> 20) + " MiB");
        assertEquals("ok\n", r.exec("echo ok", T).stdout(), "the connection is still usable");
    }

    @Test
    void aThreeGibibyteFileStreamsUpAndDownUnchanged() throws Exception {
        Remote r = root();
        Path local = dir.resolve("big-local.bin");
        Path onHost = dir.resolve("big-host.bin");
        Path back = dir.resolve("big-back.bin");
        try {
            assertEquals(0, run("truncate", "-s", "3G", local.toString()));
            try (var f = new java.io.RandomAccessFile(local.toFile(), "rw")) {
                Random random = new Random(3);
                for (long at : new long[] {0, 1L << 30, (3L << 30) - 4096}) {
                    byte[] b = new byte[4096];
                    random.nextBytes(b);
                    f.seek(at);
                    f.write(b);
                }
            }
            long heapMax = Runtime.getRuntime().maxMemory();
            long t0 = System.nanoTime();
            r.upload(local, onHost.toString(), "0600", "root");
            long t1 = System.nanoTime();
            r.download(onHost.toString(), back);
            long t2 = System.nanoTime();
            System.out.printf("3 GiB: upload %d s, download %d s; max heap %d MiB (the JVM's default); %s%n",
                TimeUnit.NANOSECONDS.toSeconds(t1 - t0), TimeUnit.NANOSECONDS.toSeconds(t2 - t1), heapMax >> 20, rss());
            assertEquals(3L << 30, Files.size(onHost));
            assertEquals(3L << 30, Files.size(back));
            // byte for byte against the original, in 4 MiB reads: three sha256sum passes (32 KiB reads, the sparse
            // original's holes included) took ~35 s of this case's 131 s in CI; a comparison proves at least as much
            assertEquals(-1, firstDifference(local, onHost), "uploaded unchanged: the first byte that differs");
            assertEquals(-1, firstDifference(local, back), "downloaded unchanged: the first byte that differs");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(back)));
        } finally {
            Files.deleteIfExists(local);
            Files.deleteIfExists(onHost);
            Files.deleteIfExists(back);
        }
    }

    /** The offset of the first byte where a and b differ (the shorter one's length if one is a prefix of the other), or -1. */
    static long firstDifference(Path a, Path b) throws IOException {
        byte[] x = new byte[4 << 20];
        byte[] y = new byte[4 << 20];
        try (var in = Files.newInputStream(a); var other = Files.newInputStream(b)) {
            long at = 0;
            while (true) {
                int n = in.readNBytes(x, 0, x.length);
                int m = other.readNBytes(y, 0, y.length);
                int i = java.util.Arrays.mismatch(x, 0, n, y, 0, m);
                if (i >= 0) return at + i;
                if (n == 0) return -1;
                at += n;
            }
        }
    }

    @Test
    void aHostThatAcceptsTcpButNeverSpeaksSshFailsWithinItsTimeoutNamed() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 5, InetAddress.getByName("127.0.0.1"))) {
            List<Socket> accepted = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) accepted.add(silent.accept()); // and never a byte written
                } catch (IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            Node n = node("root", id, knownHosts(), Optional.empty(), silent.getLocalPort(), Optional.empty());
            SshOptions threeSeconds = new SshOptions(Duration.ofSeconds(3), Duration.ofSeconds(5), false, null);
            long t0 = System.nanoTime();
            RemoteException e = assertThrows(RemoteException.class, () -> SshRemote.connect(n, threeSeconds).close());
            System.out.printf("silent host: failed after %d ms: %s%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0),
                e.getMessage());
            assertEquals(Kind.UNREACHABLE, e.kind());
            assertTrue(e.getMessage().startsWith("e2e: no SSH banner within 3s from 127.0.0.1:" + silent.getLocalPort()),
                e.getMessage());
            assertTrue(e.getMessage().contains("--connect-timeout"), e.getMessage());
            assertFalse(accepted.isEmpty(), "it did connect over TCP");
            for (Socket s : accepted) s.close();
        }
    }

    // ---- files ----

    @Test
    void uploadPutsContentModeAndOwnerAndLeavesNothingInTmp() throws Exception {
        Remote r = root();
        Set<String> before = tmpLeftovers();
        Path target = dir.resolve("etc/with space's.conf");
        Files.createDirectories(target.getParent());
        Files.writeString(target, "old content");
        r.upload("a=1\nb=2\n".getBytes(StandardCharsets.UTF_8), target.toString(), "0640", "root:daemon");
        assertEquals("a=1\nb=2\n", Files.readString(target));
        PosixFileAttributes a = Files.readAttributes(target, PosixFileAttributes.class);
        assertEquals("rw-r-----", PosixFilePermissions.toString(a.permissions()));
        assertEquals("root", a.owner().getName());
        assertEquals("daemon", a.group().getName());
        assertFalse(Files.exists(Path.of(target + ".gpuctl-tmp")));
        assertEquals(before, tmpLeftovers());
        RemoteException e = assertThrows(RemoteException.class,
            () -> r.upload(new byte[] {1}, dir.resolve("no/such/dir/x").toString(), "0644", "root"));
        assertEquals(Kind.IO, e.kind());
        assertEquals(before, tmpLeftovers());
    }

    @Test
    void uploadWithBeforeRunsItInTheInstallsCommandAndWritesNothingWhenItFails() throws Exception {
        Remote r = root();
        Set<String> before = tmpLeftovers();
        Path target = dir.resolve("etc/journalled.conf");
        Files.createDirectories(target.getParent());
        Path mark = dir.resolve("before-ran");
        // before passes: it ran, its stdout kept out of the answer, the file written
        ExecResult ok = r.upload("echo ran > '" + mark + "'; echo said", "x=1\n".getBytes(StandardCharsets.UTF_8), target.toString(), "0644", "root");
        assertEquals(0, ok.exit(), ok.toString());
        assertEquals("ran\n", Files.readString(mark));
        assertEquals("x=1\n", Files.readString(target));
        // before fails (an exit of its own): its status and stderr come back, the file is as it was, nothing left in /tmp
        ExecResult no = r.upload("echo cannot journal >&2; exit 7", "x=2\n".getBytes(StandardCharsets.UTF_8), target.toString(), "0644", "root");
        assertEquals(7, no.exit(), no.toString());
        assertTrue(no.stderr().contains("cannot journal"), no.toString());
        assertEquals("x=1\n", Files.readString(target));
        assertFalse(Files.exists(Path.of(target + ".gpuctl-tmp")));
        assertEquals(before, tmpLeftovers());
        // before passes but the install cannot: the write's own failure, as upload's
        RemoteException e = assertThrows(RemoteException.class,
            () -> r.upload("true", new byte[] {1}, dir.resolve("no/such/dir/x").toString(), "0644", "root"));
        assertEquals(Kind.IO, e.kind());
        assertEquals(before, tmpLeftovers());
    }

    @Test
    void downloadRoundTripsBinary() throws Exception {
        Remote r = root();
        byte[] data = new byte[1_000_000];
        new Random(42).nextBytes(data);
        Path f = dir.resolve("blob.bin");
        r.upload(data, f.toString(), "0600", "root");
        assertArrayEquals(data, Files.readAllBytes(f));
        assertArrayEquals(data, r.download(f.toString()));
        assertArrayEquals(new byte[0], r.download("/dev/null"));
        RemoteException e = assertThrows(RemoteException.class, () -> r.download(dir.resolve("missing").toString()));
        assertEquals(Kind.IO, e.kind());
    }

    // ---- host keys ----

    @Test
    void unknownHostKeyIsRefusedShowingItsFingerprint() throws Exception {
        Path kh = dir.resolve("unknown/known_hosts");
        RemoteException e = refused(node("root", id, kh, Optional.empty(), port, Optional.empty()), false);
        assertEquals(Kind.HOST_KEY_UNKNOWN, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(hostFp), e.getMessage());
        assertTrue(e.getMessage().contains("--accept-new-host-keys"), e.getMessage());
        assertFalse(Files.exists(kh));
    }

    @Test
    void acceptNewAppendsAndASecondConnectWorksWithoutIt() throws Exception {
        Path kh = dir.resolve("accept/known_hosts");
        Node n = node("root", id, kh, Optional.empty(), port, Optional.empty());
        assertEquals("ok\n", connect(n, true).exec("echo ok", T).stdout());
        assertEquals(List.of(hostLine), Files.readAllLines(kh));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(kh)));
        assertEquals("ok\n", connect(n, false).exec("echo ok", T).stdout());
        assertEquals(List.of(hostLine), Files.readAllLines(kh));
    }

    @Test
    void changedHostKeyIsRefusedShowingBothFingerprints() throws Exception {
        keygen(dir.resolve("other_host"));
        String other = Files.readString(dir.resolve("other_host.pub")).strip();
        String otherFp = Fingerprints.keyOfLine("x " + other).orElseThrow().fingerprint();
        Path kh = Files.createTempFile(dir, "changed", "");
        Files.writeString(kh, "[127.0.0.1]:" + port + " " + other + "\n");
        for (boolean acceptNew : new boolean[] {false, true}) {
            RemoteException e = refused(node("root", id, kh, Optional.empty(), port, Optional.empty()), acceptNew);
            assertEquals(Kind.HOST_KEY_CHANGED, e.kind(), e.getMessage());
            assertTrue(e.getMessage().contains(otherFp), e.getMessage());
            assertTrue(e.getMessage().contains(hostFp), e.getMessage());
            assertTrue(e.getMessage().contains("ssh-keygen -R '[127.0.0.1]:" + port + "'"), e.getMessage());
        }
        assertEquals(1, Files.readAllLines(kh).size());
    }

    @Test
    void pinnedHostKey() throws Exception {
        Path none = dir.resolve("pinned/none");
        assertEquals("ok\n", connect(node("root", id, none, Optional.of(hostFp), port, Optional.empty()), false)
            .exec("echo ok", T).stdout());
        assertFalse(Files.exists(none), "a pinned key needs no known_hosts and writes none");
        RemoteException e = refused(node("root", id, knownHosts(), Optional.of(TestKeys.ED25519_FP), port, Optional.empty()), true);
        assertEquals(Kind.HOST_KEY_CHANGED, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(TestKeys.ED25519_FP) && e.getMessage().contains(hostFp), e.getMessage());
    }

    // ---- login ----

    /**
     * A node whose key nobody names, for a HOME with no key files: only an ssh-agent can log it in. The user is the
     * throwaway sudoer (whose shell reads no rc file), so a login is proven by `id -u` through sudo.
     */
    Node agentOnly(Path home) throws IOException {
        assumeTrue(usersMade, "needs the throwaway sudo user");
        return new Node("e2e", "127.0.0.1", Role.WORKER, false, Map.of(), new SshSettings(USER_SUDO, port,
            home.resolve(".ssh/id_ed25519"), knownHosts(), Optional.empty(), Optional.empty(), SshSettings.KeyOrigin.DEFAULT), "ssh");
    }

    @Test
    void logsInWithTheAgentsKeyWhenNoKeyFileIsThere() throws Exception {
        Path home = Files.createTempDirectory(dir, "home");
        Node n = agentOnly(home);
        try (TestAgent agent = TestAgent.start(Files.createTempDirectory(dir, "agent"))) {
            agent.add(strangerKey("wrong-in-agent"));
            agent.add(id);
            SshOptions o = opts(false).withAgent(Optional.of(agent.socket));
            Remotes.checkIdentityFiles(List.of(n), o);
            Remote r = Remotes.open(n, o);
            open.add(r);
            assertEquals("0\n", r.exec("id -u", T).stdout(), "logged in (and sudo) with the agent's second key");

            RemoteException none = assertThrows(RemoteException.class,
                () -> Remotes.checkIdentityFiles(List.of(n), opts(false).withAgent(Optional.empty())));
            assertTrue(none.getMessage().contains("no key to log in with"), none.getMessage());
        }
    }

    @Test
    void anRsaKeyInTheAgentIsSignedWithSha2() throws Exception {
        Path rsa = dir.resolve("agent_rsa");
        assertEquals(0, run("ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "", "-C", "agent-rsa", "-f", rsa.toString()));
        Files.writeString(keysDir.resolve("authorized_keys"), Files.readString(dir.resolve("agent_rsa.pub")),
            java.nio.file.StandardOpenOption.APPEND);
        try (TestAgent agent = TestAgent.start(Files.createTempDirectory(dir, "agent"))) {
            agent.add(rsa);
            Files.delete(rsa);
            Remote r = Remotes.open(agentOnly(Files.createTempDirectory(dir, "home")), opts(false).withAgent(Optional.of(agent.socket)));
            open.add(r);
            assertEquals("0\n", r.exec("id -u", T).stdout());
        }
        String log = Files.readString(dir.resolve("sshd.log"));
        assertTrue(log.contains("Accepted publickey for " + USER_SUDO) && log.contains("RSA SHA256:"), "sshd let the RSA key in");
    }

    @Test
    void agentKeysNobodyAuthorisedAreAllNamedInTheFailure() throws Exception {
        try (TestAgent agent = TestAgent.start(Files.createTempDirectory(dir, "agent"))) {
            agent.add(strangerKey("stranger-1"));
            agent.add(strangerKey("stranger-2"));
            RemoteException e = refusedWith(agentOnly(Files.createTempDirectory(dir, "home")),
                opts(false).withAgent(Optional.of(agent.socket)));
            assertEquals(Kind.AUTH_FAILED, e.kind(), e.getMessage());
            assertTrue(e.getMessage().contains("any of the keys agent (ssh-ed25519 key 'stranger-1'), agent (ssh-ed25519 key 'stranger-2')"),
                e.getMessage());
        }
    }

    /** A fresh ed25519 key nobody authorised, commented {@code name}. */
    static Path strangerKey(String name) throws Exception {
        Path f = dir.resolve(name);
        if (!Files.exists(f)) assertEquals(0, run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", f.toString()));
        return f;
    }

    static RemoteException refusedWith(Node n, SshOptions o) {
        return assertThrows(RemoteException.class, () -> SshRemote.connect(n, o).close());
    }

    @Test
    void wrongIdentityIsAuthFailed() throws Exception {
        RemoteException e = refused(node("root", wrongId, knownHosts(), Optional.empty(), port, Optional.empty()), false);
        assertEquals(Kind.AUTH_FAILED, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(wrongId.toString()), e.getMessage());
    }

    @Test
    void nothingListeningIsUnreachableQuickly() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            closed = s.getLocalPort();
        }
        long t0 = System.nanoTime();
        RemoteException e = refused(node("root", id, knownHosts(), Optional.empty(), closed, Optional.empty()), false);
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3), "took too long");
        assertEquals(Kind.UNREACHABLE, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("127.0.0.1:" + closed) && e.getMessage().contains("refused"), e.getMessage());
    }

    @Test
    void nonRootUserWhoseSudoWantsAPassword() throws Exception {
        assumeTrue(usersMade, "useradd or sudo missing: cannot make a throwaway user");
        RemoteException e = refused(node(USER_NOPW, id, knownHosts(), Optional.empty(), port, Optional.empty()), false);
        assertEquals(Kind.SUDO_NEEDS_PASSWORD, e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains("user " + USER_NOPW + " needs a password for sudo"), e.getMessage());
    }

    @Test
    void bootstrapNamesAHostWhoseSudoWantsAPasswordAtPreflightAndChangesNothing() throws Exception {
        assumeTrue(usersMade, "useradd or sudo missing: cannot make a throwaway user");
        // the master logs in as a user without passwordless sudo; the worker's address has no sshd (also named)
        Path inv = dir.resolve("sudo-inventory.yaml");
        Files.writeString(inv, "cluster: { name: sudo-test, kubernetesVersion: \"1.35\" }\n"
            + "ssh: { user: " + USER_NOPW + ", port: " + port + ", identityFile: \"" + id + "\", knownHosts: \"" + knownHosts() + "\" }\n"
            + "nodes:\n"
            + "  - { name: m, address: 127.0.0.1, role: master }\n"
            + "  - { name: w, address: 127.0.0.2, role: worker }\n");
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int code = dev.gpuctl.cli.Main.run(new String[] {"bootstrap", inv.toString()}, new java.io.PrintWriter(out),
            new java.io.PrintWriter(err), Map.of());
        String shown = "exit " + code + "\n" + err;
        assertEquals(6, code, "an unreachable host (w) wins over a refused preflight (README's exit codes): " + shown);
        assertTrue(err.toString().contains("m: step preflight failed: sudo asks for a password"), shown);
        assertTrue(err.toString().contains("m: user " + USER_NOPW + " needs a password for sudo"), shown);
        assertTrue(err.toString().contains("w: step preflight failed: cannot reach the host"), shown);
        assertTrue(err.toString().contains("nothing was changed on any host"), shown);
        assertFalse(err.toString().contains("at dev.gpuctl"), shown);
    }

    @Test
    void nonRootUserWithSudoWorksAsRoot() throws Exception {
        assumeTrue(usersMade, "useradd or sudo missing: cannot make a throwaway user");
        Remote r = connect(node(USER_SUDO, id, knownHosts(), Optional.empty(), port, Optional.empty()), false);
        assertEquals("0\n", r.exec("id -u", T).stdout());
        String nasty = "printf '%s|' 'it'\"'\"'s' \"$(echo \\$x)\"\necho 'line two'";
        assertEquals(localSh(nasty), r.exec(nasty, T).stdout());
        Set<String> before = tmpLeftovers();
        Path target = dir.resolve("sudo-upload");
        r.upload("secret\n".getBytes(StandardCharsets.UTF_8), target.toString(), "0600", "root:root");
        assertEquals("root", Files.getOwner(target).getName());
        assertEquals("secret\n", new String(r.download(target.toString()), StandardCharsets.UTF_8));
        assertEquals(before, tmpLeftovers());
    }

    @Test
    void throughABastion() throws Exception {
        // the bastion is the same sshd: the node is reached over a direct-tcpip channel from it
        Node n = node("root", id, knownHosts(), Optional.empty(), port, Optional.of(new Bastion("127.0.0.1", "root", port)));
        assertEquals("ok\n", connect(n, false).exec("echo ok", T).stdout());
    }
}
