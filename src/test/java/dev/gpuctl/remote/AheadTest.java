package dev.gpuctl.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import net.schmizz.sshj.DefaultConfig;
import org.junit.jupiter.api.Test;

/** {@link Ahead}: made once, ahead on its own thread or by the first caller, its failure thrown as it was thrown. */
class AheadTest {
    @Test void withoutAStartTheFirstCallerMakesItOnceAndEveryCallerGetsTheSameValue() {
        AtomicInteger made = new AtomicInteger();
        List<String> makers = new CopyOnWriteArrayList<>();
        Ahead<Object> a = new Ahead<>("ahead-test", () -> {
            made.incrementAndGet();
            makers.add(Thread.currentThread().getName());
            return new Object();
        });
        Object first = a.get();
        assertSame(first, a.get());
        assertEquals(1, made.get());
        assertEquals(List.of(Thread.currentThread().getName()), makers);
    }

    @Test void startedInTheBackgroundItIsMadeOnItsOwnDaemonThreadAndACallerWaitsForIt() throws Exception {
        CountDownLatch making = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger made = new AtomicInteger();
        List<Thread> makers = new CopyOnWriteArrayList<>();
        Ahead<String> a = new Ahead<>("ahead-test", () -> {
            makers.add(Thread.currentThread());
            making.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            made.incrementAndGet();
            return "made";
        });
        a.startInBackground();
        making.await();
        List<String> got = new CopyOnWriteArrayList<>();
        List<Thread> callers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> got.add(a.get()));
            t.start();
            callers.add(t);
        }
        a.startInBackground(); // a second start while it is being made starts nothing new
        release.countDown();
        for (Thread t : callers) t.join();
        assertEquals(List.of("made", "made", "made", "made"), got);
        assertEquals(1, made.get());
        assertEquals(1, makers.size());
        assertEquals("ahead-test", makers.get(0).getName());
        assertTrue(makers.get(0).isDaemon());
        a.startInBackground(); // once made, nothing starts
        assertEquals("made", a.get());
        assertEquals(1, made.get());
    }

    @Test void whatMakingThrewIsThrownToEveryCallerAsItWasThrown() throws Exception {
        IllegalStateException boom = new IllegalStateException("no provider");
        Ahead<String> a = new Ahead<>("ahead-test", () -> { throw boom; });
        a.startInBackground();
        assertSame(boom, assertThrows(IllegalStateException.class, a::get));
        assertSame(boom, assertThrows(IllegalStateException.class, a::get));
        Error err = new LinkageError("missing class");
        Ahead<String> b = new Ahead<>("ahead-test", () -> { throw err; });
        assertSame(err, assertThrows(LinkageError.class, b::get));
    }

    @Test void anInterruptedCallerStillGetsTheValueAndKeepsItsInterrupt() throws Exception {
        CountDownLatch making = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Ahead<String> a = new Ahead<>("ahead-test", () -> {
            making.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return "made";
        });
        a.startInBackground();
        making.await();
        List<Object> seen = new CopyOnWriteArrayList<>();
        Thread caller = new Thread(() -> {
            Thread.currentThread().interrupt();
            seen.add(a.get());
            seen.add(Thread.currentThread().isInterrupted());
        });
        caller.start();
        // the caller waits (interrupted at once, it waits on); then the value comes
        release.countDown();
        caller.join();
        assertEquals(List.of("made", true), seen);
    }

    @Test void sshConfigurationPreparedAheadIsTheOneEveryConnectionUses() {
        SshConnect.prepareInBackground();
        DefaultConfig c = SshConnect.config();
        assertSame(c, SshConnect.config());
        assertTrue(c instanceof SshConnect.ModernCiphers);
        assertTrue(c.getCipherFactories().stream().anyMatch(f -> f.getName().equals("aes128-ctr")), c.getCipherFactories()::toString);
    }
}
