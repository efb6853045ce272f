package dev.gpuctl.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
        assertHeavyCallsWithinLimits(f);
    }

    @Test void verifyOf64WorkersPassesAndEveryHostAnswers() {
        Simulation.Figures f = new Simulation(dir, Path.of(""), Recording.load()).run(Simulation.Mode.VERIFY, WORKERS, CONCURRENCY, FAST);
        assertAllAnswered(f);
        assertHeavyCallsWithinLimits(f);
    }

    /** #32's limits, per host and run (a verify; a no-op re-run the same or fewer): on each GPU worker, on the master. */
    static final Map<LatencyModel.Tool, Long> WORKER_LIMITS = Map.of(LatencyModel.Tool.NVIDIA_SMI, 2L, LatencyModel.Tool.DOCKER, 1L,
        LatencyModel.Tool.SYSTEMCTL_SHOW, 1L);
    static final Map<LatencyModel.Tool, Long> MASTER_LIMITS = Map.of(LatencyModel.Tool.KUBECTL, 2L);

    /**
     * Where gpuctl still runs more than #32's limits (the recording of today's probes), per run, as ceilings that no
     * change may raise. A verify is within every limit: a worker's one docker process is the runtime step's
     * {@code docker info} (preflight reads daemon.json and docker0's address without the docker CLI); the master's two
     * kubectl are the cluster read and {@code MasterApi}'s one diff of both manifests that also tells the API server
     * answers. A no-op re-run asks that diff in the control plane's round; the GPU round is given that answer
     * ({@code HostReadings}: nothing was applied on the master since) and asks only the cluster read: 2. A verify's
     * master also runs gpu-pods-nvml (verify only): its running GPU pods come from that same cluster read (each pod's
     * owner and GPU limits are among its fields) and it starts one {@code kubectl exec nvidia-smi -L} per such pod, none
     * when there is none (the recording has none: its master runs 2; a cluster with P running GPU pods, 2 + P).
     */
    static final Map<String, Long> NOT_YET_WITHIN_RERUN = Map.of();
    static final Map<String, Long> NOT_YET_WITHIN_VERIFY = Map.of();

    static void assertHeavyCallsWithinLimits(Simulation.Figures f) {
        Map<String, Long> notYetWithin = f.mode() == Simulation.Mode.RERUN ? NOT_YET_WITHIN_RERUN : NOT_YET_WITHIN_VERIFY;
        String counts = "master: " + f.heavyText(true) + "; worker: " + f.heavyText(false);
        List<String> over = new ArrayList<>();
        java.util.Set<String> overNames = new java.util.HashSet<>();
        for (boolean master : new boolean[] {true, false}) {
            (master ? MASTER_LIMITS : WORKER_LIMITS).forEach((tool, limit) -> {
                String name = (master ? "master " : "worker ") + tool.label;
                long runs = f.mostRuns(tool, master);
                long allowed = notYetWithin.getOrDefault(name, limit);
                assertTrue(runs <= allowed, name + " " + runs + " > " + allowed + " (#32's limit " + limit + "): " + counts);
                if (runs > limit) {
                    over.add(name + " " + runs + " (limit " + limit + ")");
                    overNames.add(name);
                }
            });
        }
        assertEquals(notYetWithin.keySet(), overNames,
            "NOT_YET_WITHIN_" + f.mode() + " names exactly the limits still exceeded: " + over);
        assertTrue(f.mostRuns(LatencyModel.Tool.NVIDIA_SMI, false) > 0 && f.mostRuns(LatencyModel.Tool.KUBECTL, true) > 0,
            "the counts count: " + counts);
    }

    /** The first few of many (a problem of every host is one problem 65 times). */
    static String first(java.util.List<String> all) {
        return all.size() <= 5 ? all.toString() : all.subList(0, 5) + " and " + (all.size() - 5) + " more";
    }

    private static void assertAllAnswered(Simulation.Figures f) {
        System.out.println(f.mode() + " 1+" + f.workers() + " heavy tool runs, most on one host: master: " + f.heavyText(true) + "; worker: " + f.heavyText(false));
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
