package dev.gpuctl.remote;

import dev.gpuctl.inventory.Node;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The machine gpuctl runs on ({@code connection: local}): commands run with {@code sh -c} through
 * {@link ProcessBuilder}, directly when gpuctl runs as root, else through {@code sudo -n}.
 * Same contract as {@link SshRemote}; a timeout kills the command and everything it started.
 */
public final class LocalRemote implements Remote {
    private final String name;
    private final boolean root;

    LocalRemote(String name, boolean root) {
        this.name = name;
        this.root = root;
    }

    /** @throws RemoteException SUDO_NEEDS_PASSWORD when not root and {@code sudo -n} does not work */
    public static LocalRemote open(Node node) {
        LocalRemote r = new LocalRemote(node.name(), isRoot());
        if (!r.root) {
            Raw check = r.run(List.of("sudo", "-n", "true"), Duration.ofSeconds(30), "sudo -n true");
            if (check.exit() != 0) {
                throw RemoteException.sudoNeedsPassword(node.name(), System.getProperty("user.name"), StreamPump.text(check.err()));
            }
        }
        return r;
    }

    static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }

    @Override
    public String name() { return name; }

    @Override
    public ExecResult exec(String command, Duration timeout) {
        Raw r = run(Shell.localArgv(command, root), timeout, command);
        return new ExecResult(r.exit(), StreamPump.text(r.out()), StreamPump.text(r.err()));
    }

    @Override
    public Held hold(String command, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Process p;
        try {
            p = new ProcessBuilder(Shell.localArgv(command, root)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw RemoteException.io(name, "cannot start " + RemoteException.shown(command), RemoteException.reason(e), e);
        }
        StreamPump out = StreamPump.start(p.getInputStream(), "local-" + name + "-held-out");
        try (Released ignored = out::release) {
            if (!out.awaitLine(deadline)) {
                kill(p);
                throw RemoteException.timeout(name, command, timeout);
            }
            String text = StreamPump.text(out.bytes());
            int nl = text.indexOf('\n');
            if (nl >= 0) {
                return Held.running(text.substring(0, nl), () -> {
                    try {
                        p.getOutputStream().close();
                        if (!p.waitFor(10, TimeUnit.SECONDS)) kill(p);
                    } catch (IOException e) {
                        kill(p);
                    } catch (InterruptedException e) {
                        kill(p);
                        Thread.currentThread().interrupt();
                    }
                });
            }
            long left = Math.max(1, deadline - System.nanoTime());
            if (!p.waitFor(left, TimeUnit.NANOSECONDS)) {
                kill(p);
                throw RemoteException.timeout(name, command, timeout);
            }
            return Held.ended(text, p.exitValue());
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            throw RemoteException.io(name, "interrupted while running " + RemoteException.shown(command), "interrupted", e);
        }
    }

    record Raw(int exit, byte[] out, byte[] err, long outCut) {}

    /** Gives a pump's budget back at the end of a try block. */
    private interface Released extends AutoCloseable {
        @Override void close();
    }

    private Raw run(List<String> argv, Duration timeout, String shown) {
        return run(argv, timeout, shown, null);
    }

    /** Runs a command; with {@code sink}, its stdout is written there (streamed, not kept) instead of kept. */
    private Raw run(List<String> argv, Duration timeout, String shown, java.io.OutputStream sink) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Process p;
        try {
            p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw RemoteException.io(name, "cannot start " + RemoteException.shown(shown), RemoteException.reason(e), e);
        }
        StreamPump out = sink == null ? StreamPump.start(p.getInputStream(), "local-" + name + "-out")
            : StreamPump.toSink(p.getInputStream(), "local-" + name + "-out", sink);
        StreamPump err = StreamPump.start(p.getErrorStream(), "local-" + name + "-err");
        try (Released a = out::release; Released b = err::release) {
            long left = deadline - System.nanoTime();
            boolean exited = left > 0 && p.waitFor(left, TimeUnit.NANOSECONDS);
            // A background child may keep the pipes open after the shell exited: that, too, is "not finished".
            if (!exited || !out.await(deadline) || !err.await(deadline)) {
                kill(p);
                throw RemoteException.timeout(name, shown, timeout).withPartialStdout(out.bytes());
            }
            Throwable t = out.failure() != null ? out.failure() : err.failure();
            if (t != null) {
                throw RemoteException.io(name, "reading the output of " + RemoteException.shown(shown) + " failed",
                    RemoteException.reason(t) + "; its output is incomplete, so it is not used", t);
            }
            return new Raw(p.exitValue(), out.bytes(), err.bytes(), out.cut());
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            throw RemoteException.io(name, "interrupted while running " + RemoteException.shown(shown), "interrupted", e);
        }
    }

    /** Kills the command and all it started (children first, so none is re-parented and missed). */
    private static void kill(Process p) {
        // Snapshot the tree, then stop the shell first so it cannot start its next command, then the rest.
        var tree = p.descendants().toList();
        p.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
        try {
            p.getInputStream().close();
            p.getErrorStream().close();
        } catch (IOException ignored) {
            // the drains end with the pipes
        }
    }

    @Override
    public void upload(byte[] content, String path, String mode, String owner) {
        upload(path, mode, owner, tmp -> Files.write(tmp, content));
    }

    @Override
    public void upload(Path from, String path, String mode, String owner) {
        upload(path, mode, owner, tmp -> Files.copy(from, tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING));
    }

    private interface Filler {
        void fill(Path tmp) throws IOException;
    }

    /** A 0600 temp file in /tmp, filled, then installed into place. */
    private void upload(String path, String mode, String owner, Filler filler) {
        Path tmp;
        try {
            tmp = Files.createTempFile(Path.of("/tmp"), ".gpuctl-", "",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            throw RemoteException.io(name, "cannot upload " + path + " (temp file in /tmp)", RemoteException.reason(e), e);
        }
        try {
            String install = Shell.installCommand(tmp.toString(), path, mode, owner);
            filler.fill(tmp);
            ExecResult r = exec(install, Duration.ofSeconds(60));
            if (!r.ok()) {
                throw RemoteException.io(name, "cannot install " + path + " (mode " + mode + ", owner " + owner + ")",
                    "exit " + r.exit() + ": " + r.tail(5), null);
            }
        } catch (IOException e) {
            throw RemoteException.io(name, "cannot upload " + path + " (temp file " + tmp + ")", RemoteException.reason(e), e);
        } finally {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // install removed it, or root owns it now: nothing more to do
            }
        }
    }

    @Override
    public byte[] download(String path) {
        String command = Shell.catCommand(path);
        Raw r = run(Shell.localArgv(command, root), Duration.ofMinutes(5), command);
        if (r.exit() != 0) {
            throw RemoteException.io(name, "cannot read " + path, "exit " + r.exit() + ": "
                + RemoteException.oneLine(StreamPump.text(r.err())), null);
        }
        if (r.outCut() > 0) throw RemoteException.io(name, "cannot read " + path, Remotes.tooBigForMemory(), null);
        return r.out();
    }

    @Override
    public void download(String path, Path to) {
        String command = Shell.catCommand(path);
        Raw r;
        try (java.io.OutputStream os = Remotes.localTarget(to)) {
            r = run(Shell.localArgv(command, root), Remotes.TRANSFER_TIMEOUT, command, os);
        } catch (IOException e) {
            throw RemoteException.io(name, "cannot write " + to + " (download of " + path + ")", RemoteException.reason(e), e);
        }
        if (r.exit() != 0) {
            throw RemoteException.io(name, "cannot read " + path, "exit " + r.exit() + ": "
                + RemoteException.oneLine(StreamPump.text(r.err())), null);
        }
    }

    @Override
    public void close() {}

    @Override
    public String toString() { return "local:" + name; }
}
