package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.RemoteException;
import dev.gpuctl.step.Facts;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Work that can wait waits for the hosts' connections to be tried, and no longer than it is told. */
class HostRunTest extends ShHosts {
    @Test void awaitingConnectionsReturnsOnceEachWasTriedMadeOrFailed() throws Exception {
        try (HostRun run = new HostRun(inv, n -> {
            sleep(300);
            if (n.name().equals("w1")) throw new RemoteException(RemoteException.Kind.UNREACHABLE, "w1", "w1: refused");
            return host(n.name());
        }, new Facts(), "", 2)) {
            long t0 = System.nanoTime();
            run.beside("connect-m", () -> run.remote(inv.master()));
            run.beside("connect-w1", () -> assertThrows(RemoteException.class, () -> run.remote(inv.node("w1").orElseThrow())));
            run.awaitConnections(List.of("m", "w1"), Duration.ofSeconds(20));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 250 && ms < 10_000, "waited for both tries, a failed one too: " + ms + " ms");

            long t1 = System.nanoTime();
            run.awaitConnections(List.of("m", "never"), Duration.ofMillis(400));
            long waited = (System.nanoTime() - t1) / 1_000_000;
            assertTrue(waited >= 350 && waited < 5_000, "a host never tried is waited for at most the bound: " + waited + " ms");
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
