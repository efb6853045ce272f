package dev.gpuctl.remote;

import dev.gpuctl.inventory.Bastion;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.inventory.SshSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import net.schmizz.keepalive.KeepAliveProvider;
import com.hierynomus.sshj.transport.cipher.BlockCiphers;
import com.hierynomus.sshj.transport.cipher.ChachaPolyCiphers;
import com.hierynomus.sshj.transport.cipher.GcmCiphers;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.common.Factory;
import net.schmizz.sshj.transport.cipher.Cipher;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.connection.channel.direct.Signal;
import net.schmizz.sshj.sftp.FileAttributes;
import net.schmizz.sshj.sftp.OpenMode;
import net.schmizz.sshj.sftp.RemoteFile;
import net.schmizz.sshj.sftp.SFTPClient;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.userauth.UserAuthException;

/**
 * A host over SSH (sshj): one connection for the whole run, one session channel per command.
 * Host keys are checked strictly ({@link HostKeyCheck}); a bastion, when set, is connected to first
 * (its key checked against the same known_hosts) and the host is reached through a direct-tcpip channel.
 */
public final class SshRemote implements Remote {
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * One sshj configuration for every connection: building one tries every cipher it lists, and its factories make
     * fresh objects per connection (its random source is synchronised). Made on first use, never changed after.
     */
    private static final class Config {
        static final DefaultConfig INSTANCE = make();

        private static DefaultConfig make() {
            DefaultConfig c = new ModernCiphers();
            c.setKeepAliveProvider(KeepAliveProvider.KEEP_ALIVE);
            return c;
        }
    }

    /**
     * sshj's configuration offering the ciphers in OpenSSH's default order (chacha20-poly1305, AES-CTR, AES-GCM),
     * then AES-CBC for an old server. sshj's own list also has Blowfish, Twofish, Serpent, CAST, 3DES and RC4, and it tries every
     * one of them to drop those the JVM lacks: 0.4 s of CPU before the first connection, a third of gpuctl's CPU in a
     * verify of three hosts (a JFR profile). The ones kept are tried the same way.
     */
    static final class ModernCiphers extends DefaultConfig {
        static final List<Factory.Named<Cipher>> OFFERED = List.of(ChachaPolyCiphers.CHACHA_POLY_OPENSSH(),
            BlockCiphers.AES128CTR(), BlockCiphers.AES192CTR(), BlockCiphers.AES256CTR(), GcmCiphers.AES128GCM(),
            GcmCiphers.AES256GCM(), BlockCiphers.AES128CBC(), BlockCiphers.AES192CBC(), BlockCiphers.AES256CBC());

        @Override protected void initCipherFactories() {
            List<Factory.Named<Cipher>> available = new ArrayList<>();
            for (Factory.Named<Cipher> f : OFFERED) {
                try {
                    Cipher c = f.create();
                    c.init(Cipher.Mode.Encrypt, new byte[c.getBlockSize()], new byte[c.getIVSize()]);
                    available.add(f);
                } catch (RuntimeException e) {
                    // not in this JVM: not offered
                }
            }
            setCipherFactories(available);
        }
    }

    static DefaultConfig config() { return Config.INSTANCE; }

    private final Node node;
    private final SSHClient client;
    private final SSHClient bastionClient;

    private SshRemote(Node node, SSHClient client, SSHClient bastionClient) {
        this.node = node;
        this.client = client;
        this.bastionClient = bastionClient;
    }

    /**
     * Connects and logs in; for a non-root user also checks that {@code sudo -n} works.
     *
     * @throws RemoteException UNREACHABLE, HOST_KEY_UNKNOWN, HOST_KEY_CHANGED, AUTH_FAILED, SUDO_NEEDS_PASSWORD, IO
     */
    public static SshRemote connect(Node node, SshOptions opts) {
        SshSettings ssh = node.ssh();
        Duration timeout = opts.connectTimeoutFor(ssh);
        List<SshKeys.Login> keys = opts.keys().logins(node.name(), ssh, opts.passphrase(), opts.agentSocket());
        SSHClient bastion = null;
        SSHClient client = null;
        try {
            if (ssh.bastion().isPresent()) {
                Bastion b = ssh.bastion().get();
                bastion = newClient(opts, timeout);
                HostKeyCheck check = new HostKeyCheck(node.name() + " (bastion " + b.address() + ")", b.address(),
                    b.port(), ssh.knownHosts(), Optional.empty(), opts.acceptNewHostKeys());
                bastion.addHostKeyVerifier(check);
                String label = node.name() + " (bastion " + b.address() + ")";
                handshake(label, b.address(), b.port(), check, bastion, null, timeout);
                login(label, b.user(), bastion, keys);
            }
            client = newClient(opts, timeout);
            HostKeyCheck check = new HostKeyCheck(node.name(), node.address(), ssh.port(), ssh.knownHosts(),
                ssh.hostKey(), opts.acceptNewHostKeys());
            client.addHostKeyVerifier(check);
            handshake(node.name(), node.address(), ssh.port(), check, client, bastion, timeout);
            login(node.name(), ssh.user(), client, keys);
            SshRemote remote = new SshRemote(node, client, bastion);
            if (!ssh.isRoot()) remote.checkSudo(timeout.plusSeconds(20));
            return remote;
        } catch (RuntimeException e) {
            closeQuietly(client);
            closeQuietly(bastion);
            throw e;
        }
    }

    private static SSHClient newClient(SshOptions opts, Duration timeout) {
        SSHClient c = new SSHClient(config());
        int connectMs = (int) timeout.toMillis();
        c.setConnectTimeout(connectMs);
        // The socket read timeout must outlast the keepalive interval, or an idle connection would die.
        c.setTimeout((int) Math.max(connectMs, opts.keepAlive().toMillis() * 4));
        c.getTransport().setTimeoutMs(Math.max(connectMs, 30_000));
        c.getConnection().getKeepAlive().setKeepAliveInterval((int) opts.keepAlive().toSeconds());
        return c;
    }

    /** Ends handshakes that outlive their connect timeout (a host that accepts TCP and never speaks SSH). */
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ssh-connect-timeout");
        t.setDaemon(true);
        return t;
    });

    /**
     * TCP connect (or the bastion's direct-tcpip channel), the server's banner and the key exchange, all within
     * {@code timeout}: when it passes first, the socket (or channel) is closed under the handshake, and the failure says
     * whether the host ever sent its SSH banner.
     */
    private static void handshake(String label, String address, int port, HostKeyCheck check, SSHClient c,
                                  SSHClient via, Duration timeout) {
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean expired = new AtomicBoolean();
        AtomicReference<AutoCloseable> channel = new AtomicReference<>();
        ScheduledFuture<?> dog = WATCHDOG.schedule(() -> {
            if (!done.compareAndSet(false, true)) return;
            expired.set(true);
            // the handshake's reads fail at once; closing a channel may wait for the bastion, so not on this thread
            Thread closer = new Thread(() -> {
                closeQuietly(c.getSocket());
                closeQuietly(channel.get());
            }, "ssh-" + label + "-connect-timeout");
            closer.setDaemon(true);
            closer.start();
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        try {
            if (via == null) {
                c.connect(address, port);
            } else {
                var direct = via.newDirectConnection(address, port);
                channel.set(direct);
                if (expired.get()) closeQuietly(direct);
                c.connectVia(direct);
            }
            if (!done.compareAndSet(false, true)) throw new IOException("closed: the connect timeout passed");
        } catch (IOException e) {
            done.set(true);
            if (check.problem() != null) throw check.problem();
            if (expired.get()) {
                throw RemoteException.handshakeTimeout(label, address, port, timeout, bannerSeen(c), e);
            }
            if (e instanceof TransportException) {
                throw RemoteException.unreachable(label, address, port, "SSH handshake failed: " + RemoteException.reason(e), e);
            }
            throw RemoteException.unreachable(label, address, port, connectReason(e, via != null), e);
        } catch (RuntimeException e) {
            done.set(true);
            if (expired.get() && !(e instanceof RemoteException)) {
                throw RemoteException.handshakeTimeout(label, address, port, timeout, bannerSeen(c), e);
            }
            throw e;
        } finally {
            dog.cancel(false);
        }
    }

    /** Whether the server sent its SSH identification line (sshj throws instead of answering when it sent none). */
    private static boolean bannerSeen(SSHClient c) {
        try {
            String v = c.getTransport().getServerVersion();
            return v != null && !v.isEmpty();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String connectReason(IOException e, boolean viaBastion) {
        String hop = viaBastion ? " (from the bastion)" : "";
        if (e instanceof ConnectException) return "connection refused" + hop;
        if (e instanceof NoRouteToHostException) return "no route to host" + hop;
        if (e instanceof SocketTimeoutException) return "timed out" + hop;
        if (e instanceof UnknownHostException) return "unknown host name";
        return RemoteException.reason(e) + hop;
    }

    /**
     * Offers the keys in order until one is let in. A default key file that cannot be read (say, encrypted with no
     * terminal) is passed over when another key was offered before it; the failure names every key offered.
     */
    private static void login(String label, String user, SSHClient c, List<SshKeys.Login> keys) {
        List<String> tried = new ArrayList<>();
        UserAuthException last = null;
        for (SshKeys.Login key : keys) {
            net.schmizz.sshj.userauth.method.AuthMethod method;
            try {
                method = key.method(c);
            } catch (RemoteException e) {
                if (tried.isEmpty()) throw e;
                continue;
            }
            tried.add(key.source());
            try {
                c.auth(user, method);
                return;
            } catch (UserAuthException e) {
                last = e;
            } catch (TransportException e) {
                throw RemoteException.connectionLost(label, "(login as " + user + ")", e);
            }
            if (!c.isConnected()) break;
        }
        if (tried.size() == 1 && keys.get(0).file().isPresent()) {
            throw RemoteException.authFailed(label, user, Path.of(tried.get(0)), RemoteException.reason(last), last);
        }
        throw RemoteException.authFailedWithAll(label, user, tried, last == null ? "no key could be offered"
            : RemoteException.reason(last), last);
    }

    private void checkSudo(Duration timeout) {
        Raw r = run("sudo -n true", timeout, "sudo -n true");
        if (r.exit() != 0) {
            throw RemoteException.sudoNeedsPassword(node.name(), node.ssh().user(), StreamPump.text(r.err()));
        }
    }

    @Override
    public String name() { return node.name(); }

    @Override
    public ExecResult exec(String command, Duration timeout) {
        Raw r = run(Shell.sshCommand(command, node.ssh().isRoot()), timeout, command);
        return new ExecResult(r.exit(), StreamPump.text(r.out()), StreamPump.text(r.err()));
    }

    @Override
    public Held hold(String command, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Session session;
        try {
            session = client.startSession();
        } catch (IOException e) {
            throw RemoteException.connectionLost(node.name(), command, e);
        }
        boolean keep = false;
        StreamPump out = null;
        StreamPump err = null;
        try {
            Session.Command cmd = session.exec(Shell.sshCommand(command, node.ssh().isRoot()));
            out = StreamPump.start(cmd.getInputStream(), "ssh-" + node.name() + "-held-out");
            err = StreamPump.start(cmd.getErrorStream(), "ssh-" + node.name() + "-held-err");
            if (!out.awaitLine(deadline)) {
                abandon(session, cmd);
                keep = true; // abandon closes it
                throw RemoteException.timeout(node.name(), command, timeout);
            }
            String text = StreamPump.text(out.bytes());
            int nl = text.indexOf('\n');
            if (nl >= 0) {
                final Session held = session;
                keep = true;
                return Held.running(text.substring(0, nl), () -> {
                    try {
                        cmd.getOutputStream().close();
                    } catch (IOException ignored) {
                        // the connection is gone: the command's stdin is closed with it
                    }
                    closeQuietly(held);
                });
            }
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            cmd.join(left, TimeUnit.MILLISECONDS);
            Integer status = cmd.getExitStatus();
            return Held.ended(text, status == null ? -1 : status);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw RemoteException.io(node.name(), "interrupted while running " + RemoteException.shown(command), "interrupted", e);
        } catch (IOException e) {
            throw RemoteException.connectionLost(node.name(), command, e);
        } finally {
            // only the first line is used: what a held command prints later is read and dropped
            if (out != null) out.release();
            if (err != null) err.release();
            if (!keep) closeQuietly(session);
        }
    }

    /** Output of one command, as bytes (what the pumps kept: see {@link StreamPump}). */
    record Raw(int exit, byte[] out, byte[] err, long outCut) {}

    private Raw run(String wire, Duration timeout, String shown) {
        return run(wire, timeout, shown, null);
    }

    /** Runs a command; with {@code sink}, its stdout is written there (streamed, not kept) instead of kept. */
    private Raw run(String wire, Duration timeout, String shown, OutputStream sink) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Session session;
        try {
            session = client.startSession();
        } catch (IOException e) {
            throw RemoteException.connectionLost(node.name(), shown, e);
        }
        StreamPump out = null;
        StreamPump err = null;
        try {
            Session.Command cmd = session.exec(wire);
            cmd.getOutputStream().close();
            out = sink == null ? StreamPump.start(cmd.getInputStream(), "ssh-" + node.name() + "-out")
                : StreamPump.toSink(cmd.getInputStream(), "ssh-" + node.name() + "-out", sink);
            err = StreamPump.start(cmd.getErrorStream(), "ssh-" + node.name() + "-err");
            if (!out.await(deadline) || !err.await(deadline)) {
                abandon(session, cmd);
                session = null;
                throw RemoteException.timeout(node.name(), shown, timeout).withPartialStdout(out.bytes());
            }
            failed(out, shown);
            failed(err, shown);
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            try {
                cmd.join(left, TimeUnit.MILLISECONDS);
            } catch (IOException e) {
                if (!client.isConnected()) throw RemoteException.connectionLost(node.name(), shown, e).withPartialStdout(out.bytes());
                abandon(session, cmd);
                session = null;
                throw RemoteException.timeout(node.name(), shown, timeout);
            }
            Integer status = cmd.getExitStatus();
            int exit;
            if (status != null) {
                exit = status;
            } else if (cmd.getExitSignal() != null) {
                exit = 128 + signalNumber(cmd.getExitSignal());
            } else {
                throw RemoteException.connectionLost(node.name(), shown,
                    new IOException("the channel closed without an exit status")).withPartialStdout(out.bytes());
            }
            return new Raw(exit, out.bytes(), err.bytes(), out.cut());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw RemoteException.io(node.name(), "interrupted while running " + RemoteException.shown(shown), "interrupted", e);
        } catch (IOException e) {
            throw RemoteException.connectionLost(node.name(), shown, e);
        } finally {
            if (out != null) out.release();
            if (err != null) err.release();
            closeQuietly(session);
        }
    }

    /**
     * A pump that stopped before its stream's end: the channel broke (the connection died), or keeping what was read
     * failed here (no memory, a local file that cannot be written).
     */
    private void failed(StreamPump p, String shown) {
        Throwable t = p.failure();
        if (t == null) return;
        if (t instanceof IOException && !p.sinkFailed()) {
            throw RemoteException.connectionLost(node.name(), shown, t).withPartialStdout(p.bytes());
        }
        throw RemoteException.io(node.name(), "reading the output of " + RemoteException.shown(shown) + " failed",
            RemoteException.reason(t) + "; its output is incomplete, so it is not used", t);
    }

    /**
     * Gives up on a command that ran out of time: TERM to the process sshd started (sudo passes it on), then
     * the channel is closed in the background. sshd answers the close only once everything holding the
     * command's output has exited, so waiting here could take as long as the command itself.
     */
    private void abandon(Session session, Session.Command cmd) {
        try {
            cmd.signal(Signal.TERM);
        } catch (IOException | RuntimeException ignored) {
            // best effort: the channel is closed either way
        }
        Thread closer = new Thread(() -> closeQuietly(session), "ssh-" + node.name() + "-close");
        closer.setDaemon(true);
        closer.start();
    }

    static int signalNumber(Signal s) {
        return switch (s) {
            case HUP -> 1;
            case INT -> 2;
            case QUIT -> 3;
            case ILL -> 4;
            case ABRT -> 6;
            case FPE -> 8;
            case KILL -> 9;
            case USR1 -> 10;
            case SEGV -> 11;
            case USR2 -> 12;
            case PIPE -> 13;
            case ALRM -> 14;
            case TERM -> 15;
            default -> 0;
        };
    }

    @Override
    public void upload(byte[] content, String path, String mode, String owner) {
        upload(new java.io.ByteArrayInputStream(content), path, mode, owner);
    }

    @Override
    public void upload(Path from, String path, String mode, String owner) {
        InputStream in;
        try {
            in = Files.newInputStream(from);
        } catch (IOException e) {
            throw RemoteException.io(node.name(), "cannot upload " + path + " from " + from, RemoteException.reason(e), e);
        }
        try (in) {
            upload(in, path, mode, owner);
        } catch (IOException e) {
            // closing a local file we only read: nothing was lost
        }
    }

    /** SFTP to a 0600 temp file in /tmp, streamed in 32 KiB writes with 16 requests in flight; then install into place. */
    private void upload(InputStream content, String path, String mode, String owner) {
        String tmp = "/tmp/.gpuctl-" + HexFormat.of().formatHex(randomBytes());
        String install = Shell.installCommand(tmp, path, mode, owner);
        try (SFTPClient sftp = client.newSFTPClient()) {
            FileAttributes attrs = new FileAttributes.Builder().withPermissions(0600).build();
            try (RemoteFile f = sftp.open(tmp, EnumSet.of(OpenMode.WRITE, OpenMode.CREAT, OpenMode.EXCL), attrs);
                 OutputStream os = f.new RemoteFileOutputStream(0, 16)) {
                byte[] chunk = new byte[32 * 1024];
                int n;
                while ((n = content.read(chunk)) >= 0) os.write(chunk, 0, n);
            }
        } catch (IOException e) {
            exec("rm -f -- " + Shell.quote(tmp), Duration.ofSeconds(30));
            if (!client.isConnected()) throw RemoteException.connectionLost(node.name(), "(upload of " + path + ")", e);
            throw RemoteException.io(node.name(), "cannot upload " + path + " (SFTP to " + tmp + ")", RemoteException.reason(e), e);
        }
        ExecResult r = exec(install, Duration.ofSeconds(60));
        if (!r.ok()) {
            throw RemoteException.io(node.name(), "cannot install " + path + " (mode " + mode + ", owner " + owner + ")",
                "exit " + r.exit() + ": " + r.tail(5), null);
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[12];
        RANDOM.nextBytes(b);
        return b;
    }

    @Override
    public byte[] download(String path) {
        String command = Shell.catCommand(path);
        Raw r = run(Shell.sshCommand(command, node.ssh().isRoot()), Duration.ofMinutes(5), command);
        if (r.exit() != 0) {
            throw RemoteException.io(node.name(), "cannot read " + path, "exit " + r.exit() + ": "
                + RemoteException.oneLine(StreamPump.text(r.err())), null);
        }
        if (r.outCut() > 0) throw RemoteException.io(node.name(), "cannot read " + path, Remotes.tooBigForMemory(), null);
        return r.out();
    }

    /**
     * Streams the file through the session channel of {@code cat} (run as root, with sudo for another user: SFTP would
     * read as the login user) into the local file.
     */
    @Override
    public void download(String path, Path to) {
        String command = Shell.catCommand(path);
        Raw r;
        try (OutputStream os = Remotes.localTarget(to)) {
            r = run(Shell.sshCommand(command, node.ssh().isRoot()), Remotes.TRANSFER_TIMEOUT, command, os);
        } catch (IOException e) {
            throw RemoteException.io(node.name(), "cannot write " + to + " (download of " + path + ")", RemoteException.reason(e), e);
        }
        if (r.exit() != 0) {
            throw RemoteException.io(node.name(), "cannot read " + path, "exit " + r.exit() + ": "
                + RemoteException.oneLine(StreamPump.text(r.err())), null);
        }
    }

    @Override
    public boolean connected() {
        return client.isConnected() && (bastionClient == null || bastionClient.isConnected());
    }

    @Override
    public void close() {
        closeQuietly(client);
        closeQuietly(bastionClient);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // closing: nothing left to do
        }
    }

    @Override
    public String toString() { return "ssh:" + node.name(); }
}
