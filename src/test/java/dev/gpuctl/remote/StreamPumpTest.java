package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class StreamPumpTest {
    static final long FOREVER = Long.MAX_VALUE / 4;

    /** {@code size} bytes, byte i being i % 251, made as they are read: nothing of it is ever held whole. */
    static final class Endless extends InputStream {
        final long size;
        long pos;
        final Throwable failAt;
        final long failPos;

        Endless(long size) { this(size, null, -1); }

        Endless(long size, Throwable failAt, long failPos) {
            this.size = size;
            this.failAt = failAt;
            this.failPos = failPos;
        }

        @Override public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override public int read(byte[] b, int off, int len) throws IOException {
            if (failAt != null && pos >= failPos) {
                if (failAt instanceof IOException e) throw e;
                throw (Error) failAt;
            }
            if (pos >= size) return -1;
            int n = (int) Math.min(len, size - pos);
            for (int i = 0; i < n; i++) b[off + i] = (byte) ((pos + i) % 251);
            pos += n;
            return n;
        }
    }

    static byte[] expected(long from, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) ((from + i) % 251);
        return b;
    }

    static StreamPump finished(StreamPump p) throws InterruptedException {
        assertTrue(p.await(System.nanoTime() + FOREVER));
        return p;
    }

    @Test void threeHundredMegabytesKeepTheCapAndSayHowMuchWasCut() throws Exception {
        long size = 300_000_000L;
        StreamPump.Budget budget = new StreamPump.Budget(256L << 20);
        StreamPump p = finished(StreamPump.start(new Endless(size), "t", StreamPump.CAP, budget));
        assertNull(p.failure());
        assertEquals(size, p.total());
        assertEquals(size - StreamPump.CAP, p.cut());
        byte[] kept = p.bytes();
        String marker = StreamPump.cutMarker(size - StreamPump.CAP);
        assertEquals("\n[… 295805696 bytes cut]\n", marker);
        int half = StreamPump.CAP / 2;
        assertEquals(StreamPump.CAP + marker.getBytes(StandardCharsets.UTF_8).length, kept.length);
        assertArrayEquals(expected(0, half), Arrays.copyOfRange(kept, 0, half), "the first half is the output's start");
        assertEquals(marker, new String(kept, half, marker.getBytes(StandardCharsets.UTF_8).length, StandardCharsets.UTF_8));
        assertArrayEquals(expected(size - half, half), Arrays.copyOfRange(kept, kept.length - half, kept.length),
            "the last half is the output's end");
        assertEquals((256L << 20) - StreamPump.CAP, budget.left());
        p.release();
        assertEquals(256L << 20, budget.left(), "released: the budget is whole again");
    }

    @Test void anOutputWithinTheCapIsKeptWhole() throws Exception {
        StreamPump p = finished(StreamPump.start(new Endless(1000), "t", 64, new StreamPump.Budget(1 << 20)));
        assertEquals(1000 - 64, p.cut());
        StreamPump whole = finished(StreamPump.start(new Endless(64), "t", 64, new StreamPump.Budget(1 << 20)));
        assertEquals(0, whole.cut());
        assertArrayEquals(expected(0, 64), whole.bytes());
    }

    @Test void pumpsTogetherKeepNoMoreThanTheBudget() throws Exception {
        StreamPump.Budget budget = new StreamPump.Budget(3000);
        StreamPump a = finished(StreamPump.start(new Endless(1_000_000), "a", 2000, budget));
        StreamPump b = finished(StreamPump.start(new Endless(1_000_000), "b", 2000, budget));
        long kept = 2_000_000 - a.cut() - b.cut();
        assertTrue(kept <= 3000, "kept " + kept);
        assertEquals(0, budget.left());
        assertTrue(new String(b.bytes(), StandardCharsets.UTF_8).contains("bytes cut]"));
        a.release();
        b.release();
        assertEquals(3000, budget.left());
    }

    @Test void aReadErrorIsKeptForTheCaller() throws Exception {
        IOException broken = new IOException("connection reset");
        StreamPump p = finished(StreamPump.start(new Endless(1_000_000, broken, 100_000), "t", 1 << 20,
            new StreamPump.Budget(1 << 20)));
        assertSame(broken, p.failure());
        OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
        StreamPump q = finished(StreamPump.start(new Endless(1_000_000, oom, 100_000), "t", 1 << 20,
            new StreamPump.Budget(1 << 20)));
        assertSame(oom, q.failure(), "an Error is no silent end of the output");
    }

    @Test void aSinkGetsEverythingAndNothingIsKept() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        StreamPump p = finished(StreamPump.toSink(new Endless(5_000_000), "t", sink));
        assertEquals(5_000_000, p.total());
        assertArrayEquals(expected(0, 5_000_000), sink.toByteArray());
        assertEquals(0, p.bytes().length);
        OutputStream full = new OutputStream() {
            @Override public void write(int b) throws IOException { throw new IOException("No space left on device"); }
        };
        StreamPump q = finished(StreamPump.toSink(new Endless(100), "t", full));
        assertInstanceOf(IOException.class, q.failure());
        assertTrue(q.sinkFailed(), "the sink failed, not the stream");
        StreamPump r = finished(StreamPump.toSink(new Endless(1000, new IOException("reset"), 10), "t", sink));
        assertFalse(r.sinkFailed(), "the stream failed, not the sink");
    }
}
