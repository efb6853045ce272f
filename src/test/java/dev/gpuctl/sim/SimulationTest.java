package dev.gpuctl.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scale simulation as a test of correctness (no timing): gpuctl's engine against 1 master + 64 simulated workers
 * that answer from the bed's recording; the no-op re-run and the verify complete, every host answered, nothing
 * changed, exit 0, and never more hosts worked on at once than the run's concurrency.
 */
class SimulationTest {
    static final int WORKERS = 64;
    static final int CONCURRENCY = 16;
    /** The latency model, a tenth as long: the test is about what runs, not how fast. */
    static final LatencyModel FAST = LatencyModel.standard(Duration.ofMillis(100)).scaled(0.1);

    @TempDir Path dir;

    @Test void noOpReRunOf64WorkersChangesNothingAndEveryHostAnswers() {
        Simulation.Figures f = new Simulation(dir, Path.of(""), Recording.load()).run(Simulation.Mode.RERUN, WORKERS, CONCURRENCY, FAST);
        assertAllAnswered(f);
        assertEquals(0, f.changed(), "a no-op re-run changed steps: " + f.problems());
    }

    @Test void verifyOf64WorkersPassesAndEveryHostAnswers() {
        Simulation.Figures f = new Simulation(dir, Path.of(""), Recording.load()).run(Simulation.Mode.VERIFY, WORKERS, CONCURRENCY, FAST);
        assertAllAnswered(f);
    }

    /** The first few of many (a problem of every host is one problem 65 times). */
    static String first(java.util.List<String> all) {
        return all.size() <= 5 ? all.toString() : all.subList(0, 5) + " and " + (all.size() - 5) + " more";
    }

    private static void assertAllAnswered(Simulation.Figures f) {
        assertEquals(0, f.exit(), "exit " + f.exit() + ": " + first(f.problems()) + "\nunanswered: " + first(f.unanswered()));
        assertTrue(f.unanswered().isEmpty(), "commands nothing in the recording answers: " + first(f.unanswered()));
        assertTrue(f.problems().isEmpty(), "problems: " + first(f.problems()));
        assertEquals(WORKERS + 1, f.answeredPerHost().size(), "hosts that answered: " + f.answeredPerHost().keySet());
        f.answeredPerHost().forEach((h, n) -> assertTrue(n >= 10, h + " answered only " + n + " commands"));
        assertEquals(WORKERS + 1, f.peakConnections(), "one connection per host");
        assertTrue(f.peakBusyHosts() <= f.concurrency(), "hosts with a command running at once: " + f.peakBusyHosts() + " > " + f.concurrency());
        assertTrue(f.peakBusyHosts() > 1, "hosts worked on one at a time");
        // a verify asks a host's second batch beside its first: at most two sessions a host
        assertTrue(f.peakSessions() <= 2 * f.concurrency(), "sessions at once: " + f.peakSessions() + " > 2 x " + f.concurrency());
        assertTrue(f.nvidiaSmi() > 0 && f.kubectl() > 0, "nvidia-smi " + f.nvidiaSmi() + ", kubectl " + f.kubectl());
    }
}
