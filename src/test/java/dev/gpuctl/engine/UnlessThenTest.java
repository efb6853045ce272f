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
 * An op with a check ({@link Op.Run#unless}) goes to the host as one command, the check first: a check that passes
 * leaves the op not run and the step unchanged; one that fails (even through its own {@code exit}) runs the op; a
 * failing op fails its step with its own command shown. The hosts are this machine's sh.
 */
class UnlessThenTest extends ShHosts {
    /** Makes file "done" hold "1", unless the check {@code unless} passes. */
    static final class Guarded implements Step {
        final String unless;
        final String op;
        Guarded(String unless, String op) { this.unless = unless; this.op = op; }
        @Override public String id() { return "guarded"; }
        @Override public String title() { return "guarded"; }
        @Override public boolean runsOn(HostContext ctx) { return true; }
        @Override public List<Probe> check(HostContext ctx) { return List.of(Probe.succeeds("asked to run", "test -e never-there")); }
        @Override public List<Op> apply(HostContext ctx) { return List.of(Op.Run.of("make done", op).unless(unless)); }
        @Override public List<Probe> verify(HostContext ctx) { return List.of(); }
    }

    Runner.Result run(Step step) {
        return new Runner(inv, n -> host(n.name()), new PrintWriter(progress), new Runner.Options(false, 2, Set.of(), Duration.ofSeconds(30)))
            .run(List.of(new Phase("hosts", "hosts", List.of(step), false)));
    }

    @Test void aCheckThatPassesLeavesTheOpNotRunInTheSameCommand() throws IOException {
        Files.writeString(dir.resolve("w1").resolve("done"), "0\n");
        // the check prints, without a newline at its end: nothing of it may hide the line that says it passed
        Runner.Result r = run(new Guarded("printf 'there'; test -e done", "echo 1 > done"));
        assertTrue(r.ok(), r::toString);
        assertEquals("0\n", Files.readString(dir.resolve("w1").resolve("done")), "the op did not run");
        assertEquals(Runner.Outcome.OK, r.outcomes().get("w1").get("guarded"));
        assertEquals(Runner.Outcome.CHANGED, r.outcomes().get("m").get("guarded"), "m had no file: the op ran");
        assertEquals("1\n", Files.readString(dir.resolve("m").resolve("done")));
        assertEquals(2, commands.get("w1").size(), () -> "the check, then the check and the op in one: " + commands.get("w1"));
        assertTrue(Files.readString(r.logDir().resolve("w1.log")).contains("not run: its check passed (already right): make done"));
    }

    @Test void aCheckThatExitsEndsOnlyItselfAndTheOpRuns() throws IOException {
        Runner.Result r = run(new Guarded("for f in done; do test -e $f || exit 1; done", "echo 1 > done"));
        assertTrue(r.ok(), r::toString);
        for (String h : List.of("m", "w1")) {
            assertEquals("1\n", Files.readString(dir.resolve(h).resolve("done")), h);
            assertEquals(Runner.Outcome.CHANGED, r.outcomes().get(h).get("guarded"));
        }
    }

    @Test void aFailingOpFailsItsStepShowingItsOwnCommand() {
        Runner.Result r = run(new Guarded("test -e done", "echo broken >&2; exit 3"));
        assertFalse(r.ok());
        StepFailure f = r.failures().get(0);
        assertEquals(3, f.exit(), f.describe());
        assertEquals("echo broken >&2; exit 3", f.command(), f.describe());
        assertTrue(f.describe().contains("broken"), f.describe());
    }

    @Test void theCheckPassedLineCarriesTheRunsId() {
        String c = OpApplier.unlessThen("true", "false");
        assertTrue(c.contains(OpApplier.CHECK_PASSED), c);
        assertTrue(OpApplier.CHECK_PASSED.contains("{{run.id}}"), OpApplier.CHECK_PASSED);
    }
}
