package dev.gpuctl.remote;

import dev.gpuctl.inventory.Node;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.connection.channel.direct.Signal;

/**
 * A host over SSH (sshj): one connection for the whole run, one session channel per command. This class runs commands
 * and moves files on a connection made by {@link SshConnect} (the handshake, the host-key check, the login: host keys
 * checked strictly ({@link HostKeyCheck}); a bastion, when set, connected to first, the host reached through a
 * direct-tcpip channel), and uploads files by SFTP with {@link SftpUpload}. What is left here is one thing, a command
 * over one connection's session channels (exec, hold, download through {@code cat}): they share its session handling,
 * stream pumps and timeouts.
 */
public final class SshRemote implements Remote {
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
        SftpUpload.upload(this, client, new java.io.ByteArrayInputStream(content), path, mode, owner);
    }

    @Override
    public ExecResult upload(String before, byte[] content, String path, String mode, String owner) {
        return SftpUpload.upload(this, client, new java.io.ByteArrayInputStream(content), path, mode, owner, before);
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
            SftpUpload.upload(this, client, in, path, mode, owner);
        } catch (IOException e) {
            // closing a local file we only read: nothing was lost
        }
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
