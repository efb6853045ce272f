package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.FailureKind;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command's rounds as one engine session ({@link Runner#run(Rounds)}), on scripted hosts: the lock is held from the
 * first change to the last round, so a bootstrap started between two rounds (an upgrade's batches) is refused; one
 * log directory, one connection per host; a failure's meaning is a typed value the workflow reads.
 */
class SessionRoundsTest {
    final Map<String, RunnerTest.ScriptedHost> hosts = new ConcurrentHashMap<>();
    final Map<String, Integer> connections = new ConcurrentHashMap<>();
    final StringWriter progress = new StringWriter();

    Runner runner(Inventory inv, String holder) {
        Function<Node, Remote> connect = n -> {
            connections.merge(n.name(), 1, Integer::sum);
            return hosts.computeIfAbsent(n.name(), RunnerTest.ScriptedHost::new);
        };
        return new Runner(inv, connect, new PrintWriter(progress), new Runner.Options(false, 2, Set.of(), Duration.ofSeconds(5)))
            .lockingMaster(holder);
    }

    Inventory cluster(Path dir) throws IOException {
        Inventory inv = ShHosts.inventory(dir, "w1", "w2");
        for (String h : List.of("m", "w1", "w2")) hosts.computeIfAbsent(h, RunnerTest.ScriptedHost::new).files.put("/etc/os", "debian\n");
        return inv;
    }

    /** Writes /etc/round-N on every host. */
    static Phase round(int n) {
        return new Phase("round-" + n, "round " + n, List.of(new Step() {
            @Override public String id() { return "round-" + n; }
            @Override public String title() { return "round " + n; }
            @Override public boolean runsOn(HostContext ctx) { return true; }
            @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.equals("round " + n, "cat /etc/round-" + n, "done")); }
            @Override public List<Op> apply(HostContext ctx) { return List.of(Op.WriteFile.of("round", "/etc/round-" + n, "done\n", "0644")); }
        }), false);
    }

    @Test void aBootstrapStartedBetweenTwoRoundsIsRefusedByTheLockTheSessionHolds(@TempDir Path dir) throws IOException {
        Inventory inv = cluster(dir);
        List<Runner.Result> between = new ArrayList<>();
        Runner.Result r = runner(inv, "gpuctl upgrade by alice@laptop").run(new Rounds() {
            @Override public List<Phase> first() { return List.of(RunnerTest.preflight(), round(1)); }
            @Override public Optional<List<Phase>> next(Runner.Result done) {
                if (!between.isEmpty()) return Optional.empty();
                assertTrue(done.ok(), progress::toString);
                assertTrue(hosts.get("m").lockedBy.contains("alice@laptop"), "held between the rounds");
                // a bootstrap from another laptop, between the two batches
                between.add(runner(inv, "gpuctl bootstrap by bob@desk").run(List.of(RunnerTest.preflight(), RunnerTest.marker())));
                return Optional.of(List.of(round(2)));
            }
        });
        assertTrue(r.ok(), progress::toString);
        Runner.Result bootstrap = between.get(0);
        assertTrue(bootstrap.preflightRefused(), bootstrap::toString);
        String msg = String.join("\n", bootstrap.preflightProblems());
        assertTrue(msg.contains("another gpuctl bootstrap is running against this cluster") && msg.contains("alice@laptop"), msg);
        for (RunnerTest.ScriptedHost h : hosts.values()) {
            assertFalse(h.files.containsKey("/etc/marker"), "the refused bootstrap changed " + h.name);
            assertEquals("done\n", h.files.get("/etc/round-2"), "the session's second round ran on " + h.name);
        }
        assertNull(hosts.get("m").lockedBy, "let go at the end of the session");
        long taken = hosts.get("m").commands.stream().filter(c -> c.startsWith("hold: ") && c.contains("alice@laptop")).count();
        assertEquals(1, taken, "the session takes the lock once");
        // one connection per host for the session (the bootstrap's own runner connected once more to each)
        assertEquals(Map.of("m", 2, "w1", 2, "w2", 2), connections);
        // one log directory, both rounds in each host's log, one numbering of the phases
        String log = Files.readString(r.logDir().resolve("w1.log"));
        assertTrue(log.contains("round-1") && log.contains("round-2"), log);
        assertTrue(progress.toString().contains("== phase 2: round 2 =="), progress::toString);
        assertEquals(Runner.Outcome.CHANGED, r.outcomes().get("w1").get("round-1"), "the summary covers every round");
        assertEquals(Runner.Outcome.CHANGED, r.outcomes().get("w1").get("round-2"));
    }

    /** A drain's wait that finds a GPU job: its failure says so as a value. */
    static final class BusyStep implements Step {
        @Override public String id() { return "wait-for-jobs"; }
        @Override public String title() { return "wait"; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.equals("no job", "cat /etc/jobs", "none")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
        @Override public FailureKind failureKind() { return FailureKind.GPU_JOBS_RUNNING; }
    }

    @Test void aFailuresMeaningIsTheStepsTypedKindAndTheWorkflowChoosesTheNextRound(@TempDir Path dir) throws IOException {
        Inventory inv = cluster(dir);
        hosts.get("m").files.put("/etc/jobs", "train-42\n");
        List<FailureKind> seen = new ArrayList<>();
        Runner.Result r = runner(inv, "gpuctl upgrade by alice@laptop").run(new Rounds() {
            @Override public List<Phase> first() { return List.of(new Phase("drain", "drain", List.of(new BusyStep()), false)); }
            @Override public Optional<List<Phase>> next(Runner.Result done) {
                if (!seen.isEmpty()) return Optional.empty();
                done.failures().forEach(f -> seen.add(f.kind()));
                return Optional.of(List.of(round(1)));
            }
        });
        assertEquals(List.of(FailureKind.GPU_JOBS_RUNNING), seen);
        assertTrue(r.ok(), "the session's result is its last round's: " + r.failures());
        assertEquals(Runner.Outcome.FAILED, r.outcomes().get("m").get("wait-for-jobs"), "the summary keeps the earlier round");
        assertEquals("done\n", hosts.get("w1").files.get("/etc/round-1"));
    }

    @Test void aStepsFailureIsBrokenUnlessTheStepSaysOtherwise(@TempDir Path dir) throws IOException {
        Inventory inv = cluster(dir);
        hosts.get("w1").broken = true;
        Runner.Result r = runner(inv, "gpuctl bootstrap by alice@laptop").run(List.of(RunnerTest.preflight(), RunnerTest.marker()));
        assertEquals(1, r.failures().size());
        assertEquals(FailureKind.BROKEN, r.failures().get(0).kind());
    }
}
