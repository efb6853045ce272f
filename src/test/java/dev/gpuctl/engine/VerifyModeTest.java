package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Node;
import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.PreflightStep;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * verify: preflight on every host first; then per host, the first later phase's probes in one round trip and
 * the other phases' in another, side by side.
 */
class VerifyModeTest extends ShHosts {
    /** A verify run of {@code phases} on {@code nodes}, through the one engine. */
    VerifyReport verify(List<Phase> phases, List<Node> nodes, java.io.PrintWriter err, Duration maxWait) {
        Set<String> names = nodes.stream().map(Node::name).collect(Collectors.toCollection(java.util.LinkedHashSet::new));
        return new Runner(inv, n -> (Remote) host(n.name()), err, Runner.Options.verify(4, names, Duration.ofSeconds(30), maxWait))
            .run(phases).report();
    }

    VerifyReport verify(List<Phase> phases, List<Node> nodes) {
        return verify(phases, nodes, new java.io.PrintWriter(java.io.Writer.nullWriter()), Runner.VERIFY_WAIT);
    }

    /** A step with one probe, run on the hosts named; its probe's answer is the content of file id. */
    record FileStep(String id, List<String> on) implements Step {
        @Override public String title() { return id; }
        @Override public boolean runsOn(HostContext ctx) { return on.contains(ctx.node().name()); }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.equals(id + " is ok", "cat " + id + " 2>/dev/null || true", "ok")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    @Test void preflightThenOneRoundTripPerHostForEveryOtherPhaseWithEachAnswerFiledUnderItsStep() throws IOException {
        for (String h : List.of("m", "w1")) for (String f : List.of("pre", "prep", "cluster", "join")) Files.writeString(dir.resolve(h).resolve(f), "ok\n");
        Files.writeString(dir.resolve("w1").resolve("prep"), "swap on\n");
        List<Phase> phases = List.of(
            new Phase("preflight", "preflight", List.of(new FileStep("pre", List.of("m", "w1"))), true),
            new Phase("hosts", "hosts", List.of(new FileStep("prep", List.of("m", "w1"))), false),
            new Phase("control", "control plane", List.of(new FileStep("cluster", List.of("m"))), false),
            new Phase("join", "join", List.of(new FileStep("join", List.of("w1"))), false));
        VerifyReport report = verify(phases, inv.nodes());
        assertEquals(3, commands.get("m").size(), () -> "preflight, then host preparation and the later phases side by side: " + commands.get("m"));
        assertEquals(3, commands.get("w1").size(), commands.get("w1")::toString);
        Map<String, VerifyReport.HostReport> byHost = Map.of(report.hosts().get(0).name(), report.hosts().get(0), report.hosts().get(1).name(), report.hosts().get(1));
        assertTrue(byHost.get("m").ok(), byHost.get("m")::toString);
        assertEquals(List.of("pre", "prep", "cluster"), byHost.get("m").checks().stream().map(VerifyReport.Check::step).toList());
        VerifyReport.HostReport w1 = byHost.get("w1");
        assertFalse(w1.ok());
        assertEquals(List.of("pre", "prep", "join"), w1.checks().stream().map(VerifyReport.Check::step).toList());
        VerifyReport.Check wrong = w1.checks().stream().filter(c -> !c.ok()).findFirst().orElseThrow();
        assertEquals("prep", wrong.step());
        assertTrue(wrong.problem().contains("swap on"), wrong.problem());
        assertTrue(wrong.fix().contains("--only prep --hosts w1"), wrong.fix());
        assertEquals(Optional.empty(), w1.checks().stream().filter(c -> c.step().equals("join") && !c.ok()).findAny());
    }

    /** Its probe leaves a mark, waits (up to 10 s) for the one the cluster step's probe leaves, then says whether it came. */
    record WaitsForCluster() implements Step {
        @Override public String id() { return "prep"; }
        @Override public String title() { return id(); }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals("the cluster's probe ran meanwhile",
                "touch prep-started; i=0; while [ ! -e cluster-asked ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; [ -e cluster-asked ] && echo together || echo after", "together"));
        }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    /** Its probe waits (up to 10 s) for the host preparation probe's mark, then leaves its own: only side by side do both come. */
    record LeavesAMark() implements Step {
        @Override public String id() { return "cluster"; }
        @Override public String title() { return id(); }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals("m"); }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.succeeds("mark, once the host preparation's probe runs",
                "i=0; while [ ! -e prep-started ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; [ -e prep-started ] && touch cluster-asked")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    @Test void theClusterPhasesAreAskedAlongsideHostPreparationAndTheLogKeepsEachBatchTogether() throws IOException {
        List<Phase> phases = List.of(
            new Phase("hosts", "hosts", List.of(new WaitsForCluster()), false),
            new Phase("control", "control plane", List.of(new LeavesAMark()), false));
        VerifyReport report = verify(phases, List.of(inv.master()));
        VerifyReport.HostReport m = report.hosts().get(0);
        assertTrue(m.ok(), m::toString);
        assertEquals(List.of("prep", "cluster"), m.checks().stream().map(VerifyReport.Check::step).toList(), "filed in step order");
        String log = Files.readString(dir.resolve(".gpuctl/logs").toFile().listFiles()[0].toPath().resolve("m.log"));
        int prepStep = log.indexOf("-- step prep: verify");
        int prepProbe = log.indexOf("$ touch prep-started");
        int clusterStep = log.indexOf("-- step cluster: verify");
        int clusterProbe = log.indexOf("$ i=0; while [ ! -e prep-started ]");
        assertTrue(prepStep >= 0 && clusterStep >= 0, log);
        assertTrue(clusterStep < clusterProbe && (prepStep < prepProbe) && (clusterProbe < prepStep || prepProbe < clusterStep),
            "each part's entries stay together:\n" + log);
    }

    /** A preflight step whose probe teaches the host's machine-id from the file machine-id, as preflight does. */
    record TeachesMachineId() implements Step {
        @Override public String id() { return "preflight"; }
        @Override public String title() { return id(); }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) {
            String n = ctx.node().name();
            return List.of(Probe.succeeds("machine-id readable", "cat machine-id")
                .learning(r -> Map.of(PreflightStep.identity(ctx.node()).name(), n + "\n" + r.stdout().strip())));
        }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    @Test void preflightsCrossHostChecksAreRowsOfEachHostTheyConcern() throws IOException {
        Files.writeString(dir.resolve("m").resolve("machine-id"), "1234\n");
        Files.writeString(dir.resolve("w1").resolve("machine-id"), "1234\n");
        List<Phase> phases = List.of(new Phase("preflight", "preflight", List.of(new TeachesMachineId()), true));
        VerifyReport report = verify(phases, inv.nodes());
        assertFalse(report.ok());
        for (VerifyReport.HostReport h : report.hosts()) {
            VerifyReport.Check unique = h.checks().stream().filter(c -> c.check().equals(Preflight.Kind.UNIQUE.what)).findFirst().orElseThrow();
            assertFalse(unique.ok(), h::toString);
            assertEquals("preflight", unique.step());
            assertTrue(unique.problem().equals("w1 and m have the same machine-id (cloned image? run: rm /etc/machine-id && systemd-machine-id-setup, then reboot): 1234"), unique.problem());
        }
        Files.writeString(dir.resolve("w1").resolve("machine-id"), "5678\n");
        VerifyReport fixed = verify(phases, inv.nodes());
        assertTrue(fixed.ok(), fixed::toString);
        assertEquals(2, fixed.hosts().get(0).checks().size(), "the probe's row and the cross-host row");
    }

    /** One host step whose probe reads the file "unit" ("kubelet enabled STATE"), waiting while it says activating. */
    record Unit(String id, String file) implements Step {
        @Override public String title() { return id; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals("w1"); }
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals(id + " active", "cut -d' ' -f3 " + file, "active")
                .waitingWhileStarting(Duration.ofMinutes(5), r -> r.stdout().strip().equals("activating")));
        }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    static List<Phase> unitPhases(Step... steps) {
        return List.of(new Phase("preflight", "preflight", List.of(new FileStep("pre", List.of())), true),
            new Phase("hosts", "hosts", List.of(steps), false));
    }

    @Test void whatIsStillStartingIsWaitedForWithAProgressLine() throws IOException {
        Files.writeString(dir.resolve("w1").resolve("unit"), "kubelet enabled activating\n");
        new Thread(() -> {
            try {
                Thread.sleep(3000);
                Files.writeString(dir.resolve("w1").resolve("unit"), "kubelet enabled active\n");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).start();
        java.io.StringWriter err = new java.io.StringWriter();
        VerifyReport report = verify(unitPhases(new Unit("join", "unit")), inv.nodes(), new java.io.PrintWriter(err), Duration.ofSeconds(60));
        assertTrue(report.ok(), report::toString);
        assertTrue(err.toString().contains("verify: w1: still starting, waiting up to "), err::toString);
        assertTrue(err.toString().contains("verify: w1: join active: right after "), err::toString);
    }

    @Test void aDefiniteFailureIsNotWaitedForAndEndsTheWaitsOnItsHost() throws IOException {
        Files.writeString(dir.resolve("w1").resolve("failed"), "docker enabled failed\n");
        Files.writeString(dir.resolve("w1").resolve("unit"), "kubelet enabled activating\n");
        java.io.StringWriter err = new java.io.StringWriter();
        long t0 = System.nanoTime();
        VerifyReport report = verify(unitPhases(new Unit("runtime", "failed"), new Unit("join", "unit")), inv.nodes(), new java.io.PrintWriter(err), Duration.ofSeconds(60));
        assertTrue((System.nanoTime() - t0) / 1e9 < 20, "waited " + (System.nanoTime() - t0) / 1e9 + " s:\n" + err);
        VerifyReport.HostReport w1 = report.hosts().stream().filter(h -> h.name().equals("w1")).findFirst().orElseThrow();
        assertEquals(List.of("got 'failed', expected 'active'", "got 'activating', expected 'active'"),
            w1.checks().stream().filter(c -> !c.ok()).map(VerifyReport.Check::problem).toList());
        assertFalse(err.toString().contains("runtime active"), "a failed unit is not waited for:\n" + err);
    }

    /** A cluster check on the master that is still starting (its file says activating). */
    record ClusterUnit(String file) implements Step {
        @Override public String id() { return "cluster"; }
        @Override public String title() { return "cluster"; }
        @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals("m"); }
        @Override public boolean readsCluster() { return true; }
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.equals("node w1 allocatable", "cut -d' ' -f3 " + file, "active")
                .waitingWhileStarting(Duration.ofMinutes(5), r -> r.stdout().strip().equals("activating")));
        }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    @Test void aHostNotReachedEndsTheClusterChecksWaits() throws IOException {
        Files.writeString(dir.resolve("m").resolve("pre"), "ok\n");
        Files.writeString(dir.resolve("m").resolve("unit"), "x y activating\n");
        losesConnection.add("w1");
        java.io.StringWriter err = new java.io.StringWriter();
        List<Phase> phases = List.of(new Phase("preflight", "preflight", List.of(new FileStep("pre", List.of("m", "w1"))), true),
            new Phase("cluster", "cluster", List.of(new ClusterUnit("unit")), false));
        VerifyReport report = verify(phases, inv.nodes(), new java.io.PrintWriter(err), Duration.ofSeconds(120));
        VerifyReport.HostReport m = report.hosts().stream().filter(h -> h.name().equals("m")).findFirst().orElseThrow();
        VerifyReport.HostReport w1 = report.hosts().stream().filter(h -> h.name().equals("w1")).findFirst().orElseThrow();
        assertFalse(w1.reachable(), w1::toString);
        assertEquals(List.of("got 'activating', expected 'active'"), m.checks().stream().filter(c -> !c.ok()).map(VerifyReport.Check::problem).toList());
        assertFalse(err.toString().contains("still starting, waiting"), "nothing waited for once w1 was not reached:\n" + err);
    }
}
