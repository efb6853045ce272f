package dev.gpuctl.remote;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Reads one output stream to its end on its own thread, so that a command filling stdout and stderr at
 * once never blocks on a full window or pipe. Keeps at most {@link #CAP} bytes and drops the rest.
 */
final class Drain {
    static final int CAP = 256 << 20;

    private final InputStream in;
    private final ByteArrayOutputStream buf = new ByteArrayOutputStream();
    private final Thread thread;
    private volatile IOException error;
    private volatile long dropped;

    private Drain(InputStream in, String name) {
        this.in = in;
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
    }

    static Drain start(InputStream in, String name) {
        Drain d = new Drain(in, name);
        d.thread.start();
        return d;
    }

    private void run() {
        byte[] chunk = new byte[64 * 1024];
        try (in) {
            int n;
            while ((n = in.read(chunk)) >= 0) {
                synchronized (buf) {
                    int keep = (int) Math.max(0, Math.min(n, (long) CAP - buf.size()));
                    buf.write(chunk, 0, keep);
                    dropped += n - keep;
                }
            }
        } catch (IOException e) {
            error = e;
        }
    }

    /** Waits until the stream ended or {@code deadline} (System.nanoTime) passed; true when it ended. */
    boolean await(long deadline) throws InterruptedException {
        long left = deadline - System.nanoTime();
        if (left > 0) TimeUnit.NANOSECONDS.timedJoin(thread, left);
        return !thread.isAlive();
    }

    /**
     * Waits until the stream holds a whole line, ended, or {@code deadline} (System.nanoTime) passed;
     * true unless the deadline passed first.
     */
    boolean awaitLine(long deadline) throws InterruptedException {
        while (true) {
            boolean ended = !thread.isAlive();
            synchronized (buf) {
                if (buf.toString(StandardCharsets.UTF_8).indexOf('\n') >= 0) return true;
            }
            if (ended) return true;
            if (System.nanoTime() >= deadline) return false;
            Thread.sleep(10);
        }
    }

    /** Whether the stream has ended (its thread is done). */
    boolean ended() { return !thread.isAlive(); }

    IOException error() { return error; }

    boolean truncated() { return dropped > 0; }

    byte[] bytes() {
        synchronized (buf) { return buf.toByteArray(); }
    }

    static String text(byte[] b) { return new String(b, StandardCharsets.UTF_8); }
}
