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
     * Where gpuctl still runs more than #32's limits (the recording of today's probes), as ceilings that no change may
     * raise until the calls are batched: on a worker docker 3 (preflight's docker info + docker network inspect bridge,
     * the runtime step's docker info --format); on the master kubectl 6 (readyz, the cluster read, the flannel and the device
     * plugin manifests' diffs; gpu-pods-nvml's list of the GPU pods and its kubectl exec of nvidia-smi -L in each: a pod's
     * NVML can only be asked from inside it; folding its list into the cluster read would take it back to 5). Each entry goes when its call count meets the limit (a worker's nvidia-smi went when
     * gpu-health's driver check came to read preflight's --query-gpu answer: 2, its -q -d and that query).
     */
    static final Map<String, Long> NOT_YET_WITHIN = Map.of("worker docker/crictl", 3L, "master kubectl", 6L);

    static void assertHeavyCallsWithinLimits(Simulation.Figures f) {
        String counts = "master: " + f.heavyText(true) + "; worker: " + f.heavyText(false);
        List<String> over = new ArrayList<>();
        java.util.Set<String> overNames = new java.util.HashSet<>();
        for (boolean master : new boolean[] {true, false}) {
            (master ? MASTER_LIMITS : WORKER_LIMITS).forEach((tool, limit) -> {
                String name = (master ? "master " : "worker ") + tool.label;
                long runs = f.mostRuns(tool, master);
                long allowed = NOT_YET_WITHIN.getOrDefault(name, limit);
                assertTrue(runs <= allowed, name + " " + runs + " > " + allowed + " (#32's limit " + limit + "): " + counts);
                if (runs > limit) {
                    over.add(name + " " + runs + " (limit " + limit + ")");
                    overNames.add(name);
                }
            });
        }
        assertEquals(NOT_YET_WITHIN.keySet(), overNames,
            "NOT_YET_WITHIN names exactly the limits still exceeded: " + over);
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
