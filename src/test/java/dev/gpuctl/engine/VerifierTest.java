package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.Remote;
import dev.gpuctl.steps.HostContext;
import dev.gpuctl.steps.Op;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.Probe;
import dev.gpuctl.steps.Step;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** verify: preflight on every host first, then every other phase's probes in one round trip per host. */
class VerifierTest extends ShHosts {
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
        Verifier.Report report = new Verifier(inv, n -> (Remote) host(n.name()), Duration.ofSeconds(30)).verify(phases, inv.nodes(), 4);
        assertEquals(2, commands.get("m").size(), () -> "preflight, then the rest at once: " + commands.get("m"));
        assertEquals(2, commands.get("w1").size(), commands.get("w1")::toString);
        Map<String, Verifier.HostReport> byHost = Map.of(report.hosts().get(0).name(), report.hosts().get(0), report.hosts().get(1).name(), report.hosts().get(1));
        assertTrue(byHost.get("m").ok(), byHost.get("m")::toString);
        assertEquals(List.of("pre", "prep", "cluster"), byHost.get("m").checks().stream().map(Verifier.Check::step).toList());
        Verifier.HostReport w1 = byHost.get("w1");
        assertFalse(w1.ok());
        assertEquals(List.of("pre", "prep", "join"), w1.checks().stream().map(Verifier.Check::step).toList());
        Verifier.Check wrong = w1.checks().stream().filter(c -> !c.ok()).findFirst().orElseThrow();
        assertEquals("prep", wrong.step());
        assertTrue(wrong.problem().contains("swap on"), wrong.problem());
        assertTrue(wrong.fix().contains("--only prep --hosts w1"), wrong.fix());
        assertEquals(Optional.empty(), w1.checks().stream().filter(c -> c.step().equals("join") && !c.ok()).findAny());
    }
}
