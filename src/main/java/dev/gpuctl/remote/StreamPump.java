package dev.gpuctl.remote;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads one output stream to its end on its own thread, so that a command filling stdout and stderr at once never
 * blocks on a full window or pipe. What it keeps is bounded twice: at most {@code cap} bytes per stream (the first
 * half and the last half of the output; the middle is read, counted and dropped), and all pumps of the process together
 * at most what their {@link Budget} lends them, so that 25 hosts' commands printing without end cannot exhaust the heap.
 * When bytes were dropped, {@link #bytes()} says so in the text: "[… N bytes cut]". A pump made with a sink
 * ({@link #toSink}) writes everything there instead and keeps nothing. Whatever stops the reading early (an I/O error,
 * an Error such as OutOfMemoryError, a sink that cannot be written) is kept as {@link #failure()}, for the caller to
 * report: output cut by a failure is never passed off as the whole.
 */
final class StreamPump {
    /** What one stream of one command keeps, at most. */
    static final int CAP = 4 << 20;

    /** The bytes all pumps of this process may keep at once. */
    static final Budget PROCESS = new Budget(256L << 20);

    /** Bytes that pumps may keep, shared; a pump gives back what it took when its owner {@link #release releases} it. */
    static final class Budget {
        private final AtomicLong left;

        Budget(long bytes) { this.left = new AtomicLong(bytes); }

        /** Takes up to {@code n} bytes; returns how many were granted (0 when the budget is spent). */
        long take(long n) {
            while (true) {
                long l = left.get();
                long granted = Math.min(l, n);
                if (granted <= 0) return 0;
                if (left.compareAndSet(l, l - granted)) return granted;
            }
        }

        void give(long n) { left.addAndGet(n); }

        long left() { return left.get(); }
    }

    private final InputStream in;
    private final int headCap;
    private final int tailCap;
    private final Budget budget;
    private final OutputStream sink;
    private final Thread thread;
    private final Object lock = new Object();
    private final ByteArrayOutputStream head = new ByteArrayOutputStream();
    private byte[] tail;          // a ring of the last bytes, once the head is full (null: none kept)
    private int tailStart;
    private int tailLength;
    private long granted;         // bytes taken from the budget
    private long cut;             // bytes read and not kept
    private long total;           // bytes read
    private boolean released;
    private boolean headClosed;   // the budget refused part of the start: the rest is cut
    private volatile Throwable failure;
    private volatile boolean sinkFailed;

    private StreamPump(InputStream in, String name, int cap, Budget budget, OutputStream sink) {
        this.in = in;
        this.headCap = cap - cap / 2;
        this.tailCap = cap / 2;
        this.budget = budget;
        this.sink = sink;
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
    }

    /** Starts a pump keeping at most {@link #CAP} bytes, within the process's {@link #PROCESS} budget. */
    static StreamPump start(InputStream in, String name) {
        return start(in, name, CAP, PROCESS);
    }

    static StreamPump start(InputStream in, String name, int cap, Budget budget) {
        StreamPump p = new StreamPump(in, name, cap, budget, null);
        p.thread.start();
        return p;
    }

    /** Starts a pump that writes the whole stream to {@code sink} (a local file), keeping none of it in memory. */
    static StreamPump toSink(InputStream in, String name, OutputStream sink) {
        StreamPump p = new StreamPump(in, name, 0, PROCESS, sink);
        p.thread.start();
        return p;
    }

    private void run() {
        byte[] chunk = new byte[64 * 1024];
        try (in) {
            int n;
            while ((n = in.read(chunk)) >= 0) {
                if (sink != null) {
                    try {
                        sink.write(chunk, 0, n);
                    } catch (IOException e) {
                        sinkFailed = true;
                        throw e;
                    }
                    synchronized (lock) { total += n; }
                } else {
                    keep(chunk, n);
                }
            }
        } catch (Throwable t) { // an Error too: the caller must learn that the output is not whole
            failure = t;
        }
    }

    private void keep(byte[] chunk, int n) {
        synchronized (lock) {
            total += n;
            if (released) { // the owner is done with this output: nothing more is kept
                cut += n;
                return;
            }
            int off = 0;
            int toHead = headClosed ? 0 : (int) Math.min(n, headCap - head.size());
            if (toHead > 0) {
                int ok = (int) budget.take(toHead);
                granted += ok;
                head.write(chunk, 0, ok);
                cut += toHead - ok;
                off = toHead;
                // once a byte is dropped, nothing after it joins the start: the text stays start, marker, end
                if (ok < toHead) headClosed = true;
            }
            if (off == n) return;
            if (tail == null && !released && head.size() == headCap && tailCap > 0) {
                long ok = budget.take(tailCap);
                if (ok == tailCap) {
                    tail = new byte[tailCap];
                    granted += ok;
                } else {
                    budget.give(ok);
                }
            }
            if (tail == null) {
                cut += n - off;
                return;
            }
            for (int i = off; i < n; i++) {
                if (tailLength < tailCap) {
                    tail[(tailStart + tailLength++) % tailCap] = chunk[i];
                } else {
                    tail[tailStart] = chunk[i];
                    tailStart = (tailStart + 1) % tailCap;
                    cut++;
                }
            }
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
            synchronized (lock) {
                if (head.toString(StandardCharsets.UTF_8).indexOf('\n') >= 0) return true;
            }
            if (ended) return true;
            if (System.nanoTime() >= deadline) return false;
            Thread.sleep(10);
        }
    }

    /** Whether the stream has ended (its thread is done). */
    boolean ended() { return !thread.isAlive(); }

    /** What stopped the reading before the stream's end (null: nothing did). */
    Throwable failure() { return failure; }

    /** Whether that was the sink refusing what was read (a full disk), not the stream. */
    boolean sinkFailed() { return sinkFailed; }

    /** How many bytes were read and dropped. */
    long cut() {
        synchronized (lock) { return cut; }
    }

    /** How many bytes were read (written to the sink, for a pump with one). */
    long total() {
        synchronized (lock) { return total; }
    }

    /** The bytes kept: the whole stream, or its first and last part with "[… N bytes cut]" between them. */
    byte[] bytes() {
        synchronized (lock) {
            if (cut == 0 && tailLength == 0) return head.toByteArray();
            ByteArrayOutputStream b = new ByteArrayOutputStream(head.size() + tailLength + 40);
            b.writeBytes(head.toByteArray());
            if (cut > 0) b.writeBytes(cutMarker(cut).getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < tailLength; i++) b.write(tail[(tailStart + i) % tailCap]);
            return b.toByteArray();
        }
    }

    /** The line that stands for the bytes dropped from the middle of an output. */
    static String cutMarker(long n) {
        return "\n[… " + n + " bytes cut]\n";
    }

    /** Gives the budget back what this pump took; what it keeps stays readable. */
    void release() {
        synchronized (lock) {
            if (released) return;
            released = true;
            budget.give(granted);
        }
    }

    static String text(byte[] b) { return new String(b, StandardCharsets.UTF_8); }
}
