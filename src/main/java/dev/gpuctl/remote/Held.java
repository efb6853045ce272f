package dev.gpuctl.remote;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A command started by {@link Remote#hold}: either still running (it printed its first line and now waits for
 * its stdin to close), or already ended (with all it printed and its exit status). Closing the handle closes
 * the command's stdin and its session, so whatever it holds on the host (a lock) is let go.
 */
public final class Held implements AutoCloseable {
    private final boolean running;
    private final String output;
    private final int exit;
    private final Runnable release;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Held(boolean running, String output, int exit, Runnable release) {
        this.running = running;
        this.output = output;
        this.exit = exit;
        this.release = release;
    }

    /** The command printed {@code firstLine} and keeps running until {@link #close()}. */
    public static Held running(String firstLine, Runnable release) {
        return new Held(true, firstLine, -1, release);
    }

    /** The command ended before it printed a whole line: all it printed, its exit status. */
    public static Held ended(String output, int exit) {
        return new Held(false, output, exit, () -> { });
    }

    public boolean isRunning() { return running; }

    /** The first line (without its newline) of a running command, or all the stdout of an ended one. */
    public String output() { return output; }

    /** The exit status of an ended command; -1 while it runs. */
    public int exit() { return exit; }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) release.run();
    }
}
