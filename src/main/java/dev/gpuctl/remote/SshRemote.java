package dev.gpuctl.remote;

import dev.gpuctl.inventory.Node;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.connection.channel.direct.Signal;
import net.schmizz.sshj.sftp.FileAttributes;
import net.schmizz.sshj.sftp.OpenMode;
import net.schmizz.sshj.sftp.RemoteFile;
import net.schmizz.sshj.sftp.SFTPClient;

/**
 * A host over SSH (sshj): one connection for the whole run, one session channel per command. This class runs commands
 * and moves files on a connection made by {@link SshConnect} (the handshake, the host-key check, the login: host keys
 * checked strictly ({@link HostKeyCheck}); a bastion, when set, connected to first, the host reached through a
 * direct-tcpip channel). Kept at ~360 lines: what is left is one thing, a command or a file over one connection's
 * channels (exec, hold, SFTP upload and download), and they share its session handling, stream pumps and timeouts.
 */
public final class SshRemote implements Remote {
    private static final SecureRandom RANDOM = new SecureRandom();


    private final Node node;
    private final SSHClient client;
    private final SSHClient bastionClient;

    SshRemote(Node node, SSHClient client, SSHClient bastionClient) {
        this.node = node;
        this.client = client;
        this.bastionClient = bastionClient;
    }

    /**
     * Connects and logs in ({@link SshConnect}); for a non-root user also checks that {@code sudo -n} works.
     *
     * @throws RemoteException UNREACHABLE, HOST_KEY_UNKNOWN, HOST_KEY_CHANGED, AUTH_FAILED, SUDO_NEEDS_PASSWORD, IO
     */
    public static SshRemote connect(Node node, SshOptions opts) {
        return SshConnect.connect(node, opts);
    }

    /** sshj's configuration for every connection: {@link SshConnect#config()}. */
    static DefaultConfig config() { return SshConnect.config(); }

    void checkSudo(Duration timeout) {
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
        long sent = 0;
        try (SFTPClient sftp = client.newSFTPClient()) {
            FileAttributes attrs = new FileAttributes.Builder().withPermissions(0600).build();
            try (RemoteFile f = sftp.open(tmp, EnumSet.of(OpenMode.WRITE, OpenMode.CREAT, OpenMode.EXCL), attrs);
                 OutputStream os = f.new RemoteFileOutputStream(0, 16)) {
                byte[] chunk = new byte[32 * 1024];
                int n;
                while ((n = content.read(chunk)) >= 0) {
                    os.write(chunk, 0, n);
                    sent += n;
                }
            }
        } catch (IOException e) {
            exec("rm -f -- " + Shell.quote(tmp), Duration.ofSeconds(30));
            if (!client.isConnected()) throw RemoteException.connectionLost(node.name(), "(upload of " + path + ")", e);
            throw RemoteException.io(node.name(), "cannot upload " + path + " (SFTP to " + tmp + ")", RemoteException.reason(e), e);
        }
        ExecResult r = exec(install, installTimeout(sent));
        if (!r.ok()) {
            throw RemoteException.io(node.name(), "cannot install " + path + " (mode " + mode + ", owner " + owner + ")",
                "exit " + r.exit() + ": " + r.tail(5), null);
        }
    }

    /**
     * How long installing an uploaded file into place may take: install copies it (/tmp and the target are often two
     * file systems), so a minute for the command and a second per 16 MiB copied (a 3 GiB archive: 4 min 12 s), slow
     * disks and a loaded host included.
     */
    static Duration installTimeout(long bytes) {
        return Duration.ofSeconds(60 + Math.max(0, bytes) / (16L << 20));
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

    static void closeQuietly(AutoCloseable c) {
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
