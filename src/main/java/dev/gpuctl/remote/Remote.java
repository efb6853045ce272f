package dev.gpuctl.remote;

import java.nio.file.Path;
import java.time.Duration;

/**
 * One host, reached over SSH or run locally. Every method acts as root on the host: a non-root login
 * user goes through {@code sudo -n}. Implementations are safe to use from several threads.
 * Failures to reach or talk to the host are {@link RemoteException}s; a command that ran and failed
 * is an {@link ExecResult} with a non-zero exit.
 */
public interface Remote extends AutoCloseable {
    /** The node's name in the inventory. */
    String name();

    /**
     * Runs {@code command} with {@code sh -c} as root, stdin closed, and returns its exit status and
     * stdout and stderr (UTF-8). Each stream is kept up to 4 MiB: of a longer one, its first and last 2 MiB with a line
     * "[… N bytes cut]" between them; the whole is read either way. An exit by signal N reads as 128+N, like a shell.
     *
     * @throws RemoteException TIMEOUT when it has not finished within {@code timeout} (its channel or
     *         process is then closed), CONNECTION_LOST when the connection dies meanwhile, IO when its output could
     *         not be read to the end (it is then never returned as if it were whole)
     */
    ExecResult exec(String command, Duration timeout);

    /**
     * Starts {@code command} with {@code sh -c} as root with its stdin open, and waits up to {@code timeout}
     * for its first line of stdout. A command that printed its line keeps running until the handle is closed
     * (its stdin then reaches end of file) or the connection dies, even when gpuctl itself is killed: what it
     * holds (a lock) is let go with it. A command that ends first comes back ended, with its exit status.
     *
     * @throws RemoteException TIMEOUT when it printed no whole line and did not end within {@code timeout}
     */
    Held hold(String command, Duration timeout);

    /**
     * Makes {@code path} (absolute) hold exactly {@code content}, with {@code mode} (octal, e.g. "0644")
     * and {@code owner} ("user" or "user:group"). The content goes to a 0600 temp file first, is
     * installed beside the target as {@code PATH.gpuctl-tmp} with the mode and owner asked, and renamed
     * over the target, so readers never see a half-written file. The directory must exist.
     * Nothing is left in /tmp. A symbolic link or a directory at {@code path} is refused, never replaced: a caller
     * that edits a linked file resolves the link and writes its target.
     */
    void upload(byte[] content, String path, String mode, String owner);

    /**
     * Like {@link #upload(byte[], String, String, String)}, with {@code before} (shell, run as root) run first, in the
     * same command that puts the file into place where the transport allows (one round trip fewer): when it fails,
     * nothing is written and its result comes back (exit, stderr); otherwise the file is written and the result is
     * exit 0 with what before printed on stderr (its stdout need not come back). A failure of the write itself throws
     * as upload's does.
     */
    default ExecResult upload(String before, byte[] content, String path, String mode, String owner) {
        ExecResult r = exec(before, Duration.ofMinutes(1));
        if (r.ok()) upload(content, path, mode, owner);
        return r;
    }

    /**
     * Like {@link #upload(byte[], String, String, String)}, with the content streamed from the local file {@code from}:
     * any size, never held in memory.
     */
    void upload(Path from, String path, String mode, String owner);

    /**
     * The bytes of the small file at {@code path} (a config file), read as root. A missing or unreadable file is an
     * IO error, and so is one larger than what gpuctl reads into memory (4 MiB): {@link #download(String, Path)} it.
     */
    byte[] download(String path);

    /**
     * Streams the file at {@code path}, read as root, into the local file {@code to} (created 0600 when absent, else
     * emptied first; a link there is refused): any size, never held in memory. A missing or unreadable file is an IO error.
     */
    void download(String path, Path to);

    /**
     * Whether the connection still stands: false once it died (the host rebooted, the link broke), so that the engine
     * makes a new one instead of sending a command down a dead one. A local host is always connected.
     */
    default boolean connected() { return true; }

    /** Closes the connection; never throws. */
    @Override
    void close();
}
