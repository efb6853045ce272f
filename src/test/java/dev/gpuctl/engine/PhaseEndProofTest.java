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
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A verify probe declared {@link Probe#provenAtPhaseEnd} (chrony's first sync) does not hold the host's later steps
 * of the phase: it is waited for after them, and its step fails then if it never comes right. Alone in its phase, it
 * is waited for in place. The hosts are this machine's sh, each with its own directory.
 */
class PhaseEndProofTest extends ShHosts {
    /** Starts something that settles on its own: only once file "settled" exists is it right. */
    static final class Settles implements Step {
        final Duration wait;
        Settles(Duration wait) { this.wait = wait; }
        @Override public String id() { return "settles"; }
        @Override public String title() { return "settles"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.succeeds("started", "test -e started")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(Op.Run.of("start", "touch started")); }
        @Override public List<Probe> verify(HostContext ctx) {
            return List.of(Probe.succeeds("started", "test -e started"),
                Probe.succeeds("settled", "test -e settled").waitingUpTo(wait).provenAtPhaseEnd());
        }
    }

    /** A later step of the phase; with {@code settles}, what it does also makes the earlier step's thing settle. */
    static final class Later implements Step {
        final boolean settles;
        Later(boolean settles) { this.settles = settles; }
        @Override public String id() { return "later"; }
        @Override public String title() { return "later"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.succeeds("later done", "test -e later")); }
        @Override public List<Op> apply(HostContext ctx) {
            return List.of(Op.Run.of("later", settles ? "touch later settled" : "touch later"));
        }
    }

    Runner.Result run(Step... steps) {
        return new Runner(inv, n -> host(n.name()), new PrintWriter(progress), new Runner.Options(false, 2, Set.of(), Duration.ofSeconds(30)))
            .run(List.of(new Phase("hosts", "hosts", List.of(steps), false)));
    }

    @Test void theProofIsWaitedForAfterTheHostsLaterStepsNotBeforeThem() throws IOException {
        // were the proof waited for in place, it could never come right: only the later step makes it so
        Runner.Result r = run(new Settles(Duration.ofSeconds(3)), new Later(true));
        assertTrue(r.ok(), r::toString);
        for (String h : List.of("m", "w1")) {
            assertEquals(Map.of("settles", Runner.Outcome.CHANGED, "later", Runner.Outcome.CHANGED), r.outcomes().get(h));
        }
        String log = Files.readString(r.logDir().resolve("w1.log"));
        int deferred = log.indexOf("step settles: not right yet, waited for at the end of the phase");
        int later = log.indexOf("-- step later: apply");
        int proof = log.indexOf("-- step settles: verify, waited for at the end of the phase");
        assertTrue(deferred > 0 && later > deferred && proof > later, log);
    }

    @Test void aProofThatNeverComesFailsItsStepAfterTheLaterStepsRan() throws IOException {
        Runner.Result r = run(new Settles(Duration.ofSeconds(1)), new Later(false));
        assertFalse(r.ok());
        assertEquals(2, r.failures().size(), r.failures()::toString);
        for (StepFailure f : r.failures()) {
            assertEquals("settles", f.step(), f.describe());
            assertTrue(f.describe().contains("settled"), f.describe());
            assertTrue(Files.exists(dir.resolve(f.host()).resolve("later")), "the later step ran on " + f.host());
        }
        assertTrue(progress.toString().contains("FAILED"), progress.toString());
    }

    @Test void aloneInItsPhaseTheProofIsWaitedForInPlace() throws IOException {
        Runner.Result r = run(new Settles(Duration.ofSeconds(1)));
        assertFalse(r.ok());
        assertEquals("settles", r.failures().get(0).step());
        String log = Files.readString(r.logDir().resolve("m.log"));
        assertFalse(log.contains("waited for at the end of the phase"), log);
    }
}
