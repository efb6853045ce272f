package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A phase's checks are asked in one round trip per host, and an answer is used only while nothing on that host
 * has changed since it was asked. The hosts are this machine's sh, each with its own directory.
 */
class PhaseChecksTest extends ShHosts {
    /** File a holds "1". */
    static final class A implements Step {
        @Override public String id() { return "a"; }
        @Override public String title() { return "a"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.equals("a is 1", "cat a 2>/dev/null || true", "1")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(Op.Run.of("write a", "echo 1 > a")); }
    }

    /** File b is a copy of a: what is right depends on what step a did before it. */
    static final class B implements Step {
        @Override public String id() { return "b"; }
        @Override public String title() { return "b"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of("b is a copy of a", "cat a 2>/dev/null; echo @; cat b 2>/dev/null; true", r -> {
                String[] parts = r.stdout().split("@\n", -1);
                return parts.length == 2 && parts[0].equals(parts[1]) ? Optional.empty() : Optional.of("b differs from a");
            }));
        }
        @Override public List<Op> apply(HostContext ctx) { return List.of(Op.Run.of("copy a to b", "cp a b")); }
    }

    /** Always right; its probe reads file c. */
    static final class C implements Step {
        @Override public String id() { return "c"; }
        @Override public String title() { return "c"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.of("c read", "cat c 2>/dev/null; true", r -> Optional.empty())); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(); }
    }

    Runner.Result run() {
        Phase phase = new Phase("hosts", "hosts", List.of(new A(), new B(), new C()), false);
        return new Runner(inv, n -> host(n.name()), new PrintWriter(progress), new Runner.Options(false, 2, Set.of(), Duration.ofSeconds(30)))
            .run(List.of(phase));
    }

    @Test void aNoOpRunAsksEveryStepsCheckInOneRoundTripPerHost() throws IOException {
        for (String h : List.of("m", "w1")) {
            Files.writeString(dir.resolve(h).resolve("a"), "1\n");
            Files.writeString(dir.resolve(h).resolve("b"), "1\n");
        }
        Runner.Result r = run();
        assertTrue(r.ok(), r::toString);
        assertEquals(1, commands.get("m").size(), () -> "one command for the phase's three checks: " + commands.get("m"));
        assertEquals(1, commands.get("w1").size(), commands.get("w1")::toString);
        assertEquals(Map.of("a", Runner.Outcome.OK, "b", Runner.Outcome.OK, "c", Runner.Outcome.OK), r.outcomes().get("m"));
        String log = Files.readString(r.logDir().resolve("m.log"));
        assertTrue(log.contains("-- step a: check (asked together with steps b, c)"), log);
        assertTrue(log.contains("-- step b: check (answered in the batch above)"), log);
        assertTrue(log.contains("batch of 3 probes: one command"), log);
    }

    @Test void afterAStepChangedTheHostTheStepsAfterItAreAskedAgain() throws IOException {
        // fresh hosts: a and b are both missing, so "b is a copy of a" is right in the phase's first answers;
        // once step a has written a, it no longer is, and only asking again shows that
        Runner.Result r = run();
        assertTrue(r.ok(), r::toString);
        for (String h : List.of("m", "w1")) {
            assertEquals("1\n", Files.readString(dir.resolve(h).resolve("b")), h + ": b was copied after a was written");
            assertEquals(Map.of("a", Runner.Outcome.CHANGED, "b", Runner.Outcome.CHANGED, "c", Runner.Outcome.OK), r.outcomes().get(h));
        }
        String log = Files.readString(r.logDir().resolve("w1.log"));
        // asked anew with a's verify, in its round trip, after a's write
        int verifyA = log.indexOf("-- step a: verify (asked together with the check of steps b, c)");
        int checkB = log.indexOf("-- step b: check (answered in the batch above)");
        assertTrue(verifyA > log.indexOf("-- step a: apply") && checkB > verifyA, log);
        assertTrue(log.indexOf("-- step b: verify (asked together with the check of steps c)") > log.indexOf("-- step b: apply"), log);
        // the phase's checks, a's write, a's verify with b's and c's checks, b's copy, b's verify with c's check
        assertEquals(5, commands.get("w1").size(), commands.get("w1")::toString);
        // and now nothing is left to do: one round trip per host
        commands.clear();
        Runner.Result again = run();
        assertTrue(again.ok(), again::toString);
        assertEquals(1, commands.get("m").size(), commands.get("m")::toString);
    }

    /** Starts something that writes file s ("1") a moment later; its verify waits for it. */
    static final class Starts implements Step {
        @Override public String id() { return "starts"; }
        @Override public String title() { return "starts"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.succeeds("started", "test -e started")); }
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("start", "touch started; (sleep 1; echo 1 > s) >/dev/null 2>&1 &"));
        }
        @Override public List<Probe> verify(HostContext ctx) {
            return List.of(Probe.equals("s is 1", "cat s 2>/dev/null || true", "1").waitingUpTo(Duration.ofSeconds(10)));
        }
    }

    /** File t is a copy of s: right on a fresh host until s appears. */
    static final class Copies implements Step {
        @Override public String id() { return "copies"; }
        @Override public String title() { return "copies"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) {
            return List.of(Probe.of("t is a copy of s", "cat s 2>/dev/null; echo @; cat t 2>/dev/null; true", r -> {
                String[] parts = r.stdout().split("@\n", -1);
                return parts.length == 2 && parts[0].equals(parts[1]) ? Optional.empty() : Optional.of("t differs from s");
            }));
        }
        @Override public List<Op> apply(HostContext ctx) { return List.of(Op.Run.of("copy s to t", "cp s t")); }
    }

    @Test void theLaterChecksAskedWithAVerifyThatWaitedAreAnswersFromAfterTheWait() throws IOException {
        // asked before the wait ended, "t is a copy of s" would be right (neither exists) and t never written
        Phase phase = new Phase("hosts", "hosts", List.of(new Starts(), new Copies()), false);
        Runner.Result r = new Runner(inv, n -> host(n.name()), new PrintWriter(progress),
            new Runner.Options(false, 2, Set.of(), Duration.ofSeconds(30))).run(List.of(phase));
        assertTrue(r.ok(), r::toString);
        for (String h : List.of("m", "w1")) {
            assertEquals("1\n", Files.readString(dir.resolve(h).resolve("t")), h);
            assertEquals(Map.of("starts", Runner.Outcome.CHANGED, "copies", Runner.Outcome.CHANGED), r.outcomes().get(h));
        }
        String log = Files.readString(r.logDir().resolve("w1.log"));
        assertTrue(log.contains("the batch's answers after this probe are from before the wait: asking again"), log);
    }

    @Test void aHostLostWhileThePhasesChecksAreAskedIsAFailureOfThatHostNamedWithItsStep() throws IOException {
        losesConnection.add("w1");
        Runner.Result r = run();
        assertFalse(r.ok());
        assertEquals(1, r.failures().size(), r.failures()::toString);
        StepFailure f = r.failures().get(0);
        assertEquals("w1", f.host());
        assertEquals("a", f.step());
        assertTrue(f.describe().contains("connection lost"), f.describe());
        assertTrue(progress.toString().contains("FAILED"), progress.toString());
        assertEquals(Map.of("a", Runner.Outcome.CHANGED, "b", Runner.Outcome.CHANGED, "c", Runner.Outcome.OK), r.outcomes().get("m"),
            "the phase's other host finishes");
    }

    @Test void aHostLostWhileALaterStepsProbeRunsFailsThatStepNotTheFirst() throws IOException {
        diesDuringProbe.put("w1", 2); // a's and b's probes answered; c's was running
        Runner.Result r = run();
        assertEquals(1, r.failures().size(), r.failures()::toString);
        assertEquals("c", r.failures().get(0).step(), r.failures()::toString);
        assertEquals("w1", r.failures().get(0).host());
    }
}
