package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reusable probe's answer ({@link Probe#reusedAs}) is given to a later round's probe of the same question on the same
 * host while no op ran there since, and asked anew after one, against this machine's sh: the command counts its own
 * runs in a file, so what the host ran is what the file says.
 */
class HostReadingsTest {
    @TempDir Path dir;
    final ShRemote host = new ShRemote();
    final Facts facts = new Facts();
    static final Facts.Key<String> QUESTION = new Facts.Key<>("runs so far", String.class, String::strip);

    /** Each run appends a line and prints how many runs there were: the answer says which run it came from. */
    String counted() { return "echo x >> " + dir.resolve("asked") + "; wc -l < " + dir.resolve("asked"); }

    long runs() throws IOException { return Files.readAllLines(dir.resolve("asked")).size(); }

    Probe reusable(String what, String expected) { return Probe.equals(what, counted(), expected).reusedAs(QUESTION); }

    StepRunner runner(HostLog log, HostReadings readings) {
        return new StepRunner(host.remote(), log, facts, Duration.ofSeconds(30), null, (p, d) -> {}, readings);
    }

    @Test void aLaterRoundIsGivenTheFirstRoundsAnswerWhileNoOpRanOnTheHost() throws IOException {
        HostReadings master = new HostReadings();
        try (HostLog log = new HostLog(dir.resolve("logs"), "m", facts)) {
            // round 1: in a batch beside another probe
            assertEquals(List.of(), runner(log, master).probe(List.of(Probe.equals("other", "echo b", "b"), reusable("round 1", "1")), false));
            // a later round, a new step runner of the same host and session: in a batch, and alone
            assertEquals(List.of(), runner(log, master).probe(List.of(Probe.equals("other", "echo c", "c"), reusable("round 2", "1")), false));
            assertEquals(Optional.empty(), runner(log, master).ask(reusable("round 3, alone", "1")));
        }
        assertEquals(1, runs(), "the question was asked once");
        String text = Files.readString(dir.resolve("logs/m.log"));
        assertTrue(text.contains("not asked again: the answer read earlier in this run, op generation 0"), text);
    }

    @Test void anOpOnTheHostInBetweenMakesTheNextRoundAskAgain() throws IOException {
        HostReadings master = new HostReadings();
        try (HostLog log = new HostLog(dir.resolve("logs"), "m", facts)) {
            assertEquals(Optional.empty(), runner(log, master).ask(reusable("round 1", "1")));
            assertTrue(runner(log, master).apply(List.of(Op.Run.of("an apply on the master", "true"))));
            assertEquals(1, master.generation());
            assertEquals(List.of(), runner(log, master).probe(List.of(Probe.equals("other", "echo b", "b"), reusable("after the op", "2")), false));
            // the new answer is the one reused from then on
            assertEquals(Optional.empty(), runner(log, master).ask(reusable("later", "2")));
        }
        assertEquals(2, runs());
    }

    @Test void onlyTheSameHostAndSessionReuseAndOnlyReusableProbes() throws IOException {
        HostReadings master = new HostReadings();
        try (HostLog log = new HostLog(dir.resolve("logs"), "m", facts)) {
            runner(log, master).ask(reusable("round 1", "1"));
            // another host's (or session's) readings start empty: it asks
            assertEquals(Optional.empty(), runner(log, new HostReadings()).ask(reusable("another host", "2")));
            // the same command, not marked reusable: asked every time
            assertEquals(Optional.empty(), runner(log, master).ask(Probe.equals("not reusable", counted(), "3")));
            // an op on another host does not touch this one's readings
            runner(log, new HostReadings()).apply(List.of(Op.Run.of("an apply elsewhere", "true")));
            assertEquals(Optional.empty(), runner(log, master).ask(reusable("still round 1's", "1")));
        }
        assertEquals(3, runs());
    }

    @Test void aReadingOfAnotherCommandIsNotGiven() {
        HostReadings readings = new HostReadings();
        readings.read(QUESTION, "cmd a", new dev.gpuctl.remote.ExecResult(0, "1\n", ""), 0);
        assertEquals("1", readings.current(QUESTION, "cmd a").orElseThrow().value());
        assertTrue(readings.current(QUESTION, "cmd b").isEmpty());
        readings.read(QUESTION, "cmd a", new dev.gpuctl.remote.ExecResult(0, "1\n", ""), 0);
        readings.opRan();
        assertTrue(readings.current(QUESTION, "cmd a").isEmpty(), "stale after an op");
        // read at the generation before an apply that started while it was asked: stale at once
        readings.read(QUESTION, "cmd a", new dev.gpuctl.remote.ExecResult(0, "1\n", ""), 0);
        assertTrue(readings.current(QUESTION, "cmd a").isEmpty());
    }
}
