package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.Remote;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A step's probes asked in one round trip, judged exactly as one by one, against this machine's sh. */
class StepRunnerTest {
    @TempDir Path dir;
    final ShRemote host = new ShRemote();
    final Facts facts = new Facts();

    StepRunner runner(HostLog log) { return new StepRunner(host.remote(), log, facts, Duration.ofSeconds(30), null); }

    HostLog log() { return new HostLog(dir.resolve("logs"), "h", facts); }

    String logText() throws IOException { return Files.readString(dir.resolve("logs/h.log")); }

    @Test void aWrongProbeIsAskedAgainSoonAtFirstThenEveryTwoSeconds() {
        assertEquals(List.of(Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(2)),
            java.util.stream.IntStream.range(0, 5).mapToObj(StepRunner::pause).toList());
        assertEquals(Duration.ofSeconds(2), StepRunner.pause(1000), "a long wait never asks more often than every 2 s, nor less");
    }

    @Test void aStepsProbesCostOneRoundTripAndAreJudgedOneByOne() throws IOException {
        List<Probe> probes = List.of(
            Probe.equals("one", "echo 1", "1"),
            Probe.equals("two", "printf 2", "3"),
            Probe.succeeds("exit", "echo broken >&2; exit 4"),
            Probe.of("learns", "echo 42", r -> Optional.empty()).learning(r -> Map.of("answer", r.stdout().strip())),
            Probe.of("judges with what the probe before taught", "true", r -> Optional.empty())
                .judgedWithFacts((r, f) -> f.get("answer").equals(Optional.of("42")) ? Optional.empty() : Optional.of("not learned")));
        List<String> problems;
        try (HostLog log = log()) {
            problems = runner(log).probe(probes, false);
        }
        assertEquals(1, host.commands.size(), host.commands::toString);
        assertEquals(List.of("two: got '2', expected '3'", "exit: exit 4 (broken)"), problems);
        String log = logText();
        assertTrue(log.contains("batch of 5 probes: one command, exit 0 in "), log);
        assertTrue(log.contains("$ echo broken >&2; exit 4\n  exit 4 (asked in the batch above)\n  stderr:\n    broken"), log);
        assertFalse(log.contains("__gpuctl_d"), "the script itself is not logged, its probes are");
    }

    @Test void aCommandSeveralProbesAskRunsOnceInTheBatchAndAnswersEachOfThem() throws IOException {
        Path counter = dir.resolve("asked");
        String count = "echo x >> " + counter + "; wc -l < " + counter;
        List<Probe> probes = List.of(
            Probe.equals("first reader", count, "1"),
            Probe.equals("other", "echo b", "b"),
            Probe.equals("second reader", count, "1"),
            Probe.equals("third reader, judged otherwise", count, "2"));
        List<String> problems;
        try (HostLog log = log()) {
            problems = runner(log).probe(probes, false);
        }
        assertEquals(1, host.commands.size(), host.commands::toString);
        assertEquals(List.of("third reader, judged otherwise: got '1', expected '2'"), problems);
        assertEquals(List.of("x"), Files.readAllLines(counter), "the shared command ran once");
        String log = logText();
        assertTrue(log.contains("batch of 4 probes (2 distinct commands): one command, exit 0 in "), log);
        assertEquals(4, log.split("\\(asked in the batch above", -1).length - 1, "every probe has its log entry: " + log);
        assertEquals(2, log.split("the same answer as above", -1).length - 1, "a shared answer's output is logged once: " + log);
        assertEquals(1, log.split("\n    1\n", -1).length - 1, log);
    }

    @Test void aSecretAnswerIsKeptWholeButNeverLogged() throws IOException {
        try (HostLog log = log()) {
            runner(log).probe(List.of(Probe.keepingSecret("alone", "echo client-key-$((0+1))", "one")), false);
            runner(log).probe(List.of(Probe.equals("other", "echo b", "b"), Probe.keepingSecret("in a batch", "echo client-key-$((1+1))", "two")), false);
        }
        assertEquals("client-key-1\n", facts.kept("one").orElseThrow().stdout());
        assertEquals("client-key-2\n", facts.kept("two").orElseThrow().stdout());
        String log = logText();
        assertFalse(log.contains("client-key-1") || log.contains("client-key-2"), log);
        assertEquals(2, log.split("\\[not logged: secret\\]", -1).length - 1, log);
        assertTrue(log.contains("\n    b\n"), "other answers are logged: " + log);
    }

    @Test void aSingleProbeRunsAsItIs() {
        try (HostLog log = log()) {
            assertEquals(List.of(), runner(log).probe(List.of(Probe.equals("one", "echo 1", "1")), false));
        }
        assertEquals(List.of("echo 1"), host.commands);
    }

    @Test void aProbeThatNeedsAFactTheProbesBeforeItTeachStartsANewRoundTrip() {
        List<Probe> probes = List.of(
            Probe.of("learns", "echo 7", r -> Optional.empty()).learning(r -> Map.of("n", r.stdout().strip())),
            Probe.equals("a", "echo a", "a"),
            Probe.equals("uses it", "echo $(({{n}} * 6))", "42"),
            Probe.equals("b", "echo b", "b"));
        try (HostLog log = log()) {
            assertEquals(List.of(), runner(log).probe(probes, false));
        }
        assertEquals(2, host.commands.size(), host.commands::toString);
        assertTrue(host.commands.get(1).contains("echo $((7 * 6))"), host.commands.get(1));
    }

    @Test void aProbeThatKillsTheBatchLeavesTheRestToBeAskedOneByOne() throws IOException {
        List<Probe> probes = List.of(Probe.equals("a", "echo a", "a"), Probe.succeeds("kills", "kill -9 $$"),
            Probe.equals("c", "echo c", "c"));
        List<String> problems;
        try (HostLog log = log()) {
            problems = runner(log).probe(probes, false);
        }
        assertEquals(List.of("batch", "kill -9 $$", "echo c"), host.commands.stream().map(c -> c.contains("__gpuctl_d") ? "batch" : c).toList());
        assertEquals(1, problems.size(), problems::toString);
        assertTrue(problems.get(0).startsWith("kills: exit "), problems::toString);
        assertTrue(logText().contains("1 answers came back framed, the rest are asked one by one"), logText());
    }

    @Test void theProbesAfterOneThatWaitedAreAskedAgainAfterTheWait() throws IOException {
        Path counter = dir.resolve("counter");
        // wrong on the first ask, right on the second; the probe after it reads how often it was asked
        String bump = "n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n + 1)) > " + counter + "; [ $n -ge 1 ]";
        List<Probe> probes = List.of(
            Probe.equals("before", "echo x", "x"),
            Probe.succeeds("settles", bump).waitingUpTo(Duration.ofSeconds(20)),
            Probe.equals("after", "cat " + counter, "2"));
        List<String> problems;
        try (HostLog log = log()) {
            problems = runner(log).probe(probes, true);
        }
        assertEquals(List.of(), problems);
        assertEquals(3, host.commands.size(), host.commands::toString);
        assertTrue(logText().contains("from before the wait: asking again"), logText());
        // without wait (a check), every probe is asked once, in one round trip
        host.commands.clear();
        try (HostLog log = log()) {
            assertEquals(List.of("after: got '3', expected '2'"), runner(log).probe(probes, false));
        }
        assertEquals(1, host.commands.size());
    }

    @Test void anAwaitAsksItsProbeAgainUntilItIsRightAnnouncesTheWaitAndChangesNothing() throws IOException {
        Path counter = dir.resolve("asked");
        Path after = dir.resolve("after");
        // wrong on the first ask, right on the second
        String bump = "n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n + 1)) > " + counter + "; [ $n -ge 1 ]";
        List<String> announced = new java.util.ArrayList<>();
        boolean changed;
        try (HostLog log = log()) {
            StepRunner sr = new StepRunner(host.remote(), log, facts, Duration.ofSeconds(30), null, (problem, deadline) -> announced.add(problem));
            changed = sr.apply(List.of(Op.Await.of("wait until it settles", Probe.succeeds("settled", bump).waitingUpTo(Duration.ofSeconds(30)))));
            sr.apply(List.of(Op.Run.of("after", "touch " + after)));
        }
        assertFalse(changed, "a wait changes nothing on the host");
        assertEquals("2", Files.readString(counter).strip(), "asked until right, then no more");
        assertEquals(List.of("exit 1"), announced, "the wait is announced with the problem it started from");
        assertTrue(Files.exists(after));
        assertTrue(logText().contains("waiting up to "), logText());
    }

    @Test void anAwaitThatGivesUpRunsItsUndoAndFailsWithTheProbesProblem() throws IOException {
        Path undone = dir.resolve("undone");
        Op.Await await = Op.Await.of("wait for what never comes", Probe.equals("never", "echo no", "yes").waitingUpTo(Duration.ofSeconds(1)))
            .orElse("touch " + undone);
        StepRunner.OpFailed failed;
        try (HostLog log = log()) {
            failed = org.junit.jupiter.api.Assertions.assertThrows(StepRunner.OpFailed.class, () -> runner(log).apply(List.of(await)));
        }
        assertEquals("wait for what never comes", failed.what);
        assertEquals("echo no", failed.command);
        assertEquals(1, failed.result.exit());
        assertEquals("still after waiting up to 1 s: never: got 'no', expected 'yes'", failed.result.stderr());
        assertTrue(Files.exists(undone), "the undo ran when the wait gave up");
        assertThrowsOnAZeroWait();
    }

    private static void assertThrowsOnAZeroWait() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> Op.Await.of("no wait", Probe.succeeds("x", "true")));
    }

    @Test void secretsAreMaskedInTheBatchesLogEntries() throws IOException {
        facts.put("password", "hunter2-secret", true);
        try (HostLog log = log()) {
            runner(log).probe(List.of(Probe.succeeds("a", "echo hunter2-secret"), Probe.succeeds("b", "true")), false);
        }
        assertFalse(logText().contains("hunter2"), logText());
        assertTrue(logText().contains("$ echo <password>\n  exit 0 (asked in the batch above)\n  stdout:\n    <password>"), logText());
    }

    @Test void anOpGuardedByTheStepsCheckRunsOnlyWhileTheCheckIsWrong() throws IOException {
        Path file = dir.resolve("lines");
        // judged on the laptop, as the check judges it: two lines are right, whatever the command's exit status
        Probe twoLines = Probe.of("two lines", "cat " + file + " 2>/dev/null; exit 3",
            r -> r.stdout().lines().count() == 2 ? Optional.empty() : Optional.of(r.stdout().lines().count() + " lines"));
        Op.Run add = Op.Run.of("add a line", "echo x >> " + file).unlessRight(twoLines);
        try (HostLog log = log()) {
            assertTrue(runner(log).apply(List.of(add)));
            assertTrue(runner(log).apply(List.of(add)));
            assertFalse(runner(log).apply(List.of(add)), "right now: skipped");
        }
        assertEquals("x\nx\n", Files.readString(file));
        assertEquals(5, host.commands.size(), "the check before each op, and the op while it was wrong");
        assertTrue(logText().contains("$ cat " + file), "the guard's answer is logged like any probe's");
    }

    @Test void aJournalledRunRecordsFirstInTheSameCommandAndDoesNotRunWhenTheJournalFails() throws IOException {
        Path done = dir.resolve("done");
        Op.Run run = Op.Run.of("touch", "touch " + done).journalling(new Op.Journal("a line", "echo journalled >> " + dir.resolve("j")));
        try (HostLog log = log()) {
            assertTrue(runner(log).apply(List.of(run)));
        }
        assertEquals(1, host.commands.size(), "journal and change in one command");
        assertTrue(Files.exists(done));
        assertEquals("journalled\n", Files.readString(dir.resolve("j")));

        Files.delete(done);
        Op.Run refused = Op.Run.of("touch", "touch " + done).journalling(new Op.Journal("a line", "echo 'no journal' >&2; false"));
        try (HostLog log = log()) {
            StepRunner.OpFailed f = org.junit.jupiter.api.Assertions.assertThrows(StepRunner.OpFailed.class, () -> runner(log).apply(List.of(refused)));
            assertEquals("touch " + done, f.command, "the failure names the command, not the journal's shell");
            assertTrue(f.result.stderr().contains("no journal"));
        }
        assertFalse(Files.exists(done), "the change ran without its journal line");
    }

    @Test void aFileWriteIsJournalledBeforeItIsMadeAndOnlyOnce() throws IOException {
        Path f = dir.resolve("conf");
        Remote remote = (Remote) java.lang.reflect.Proxy.newProxyInstance(Remote.class.getClassLoader(), new Class<?>[] {Remote.class}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "upload":
                    // with a command to run before the write: Remote's own way (the command, then the write)
                    if (args.length == 5) return java.lang.reflect.InvocationHandler.invokeDefault(proxy, m, args);
                    Files.write(Path.of((String) args[1]), (byte[]) args[0]);
                    return null;
                case "download": return Files.readAllBytes(Path.of((String) args[0]));
                default: return m.invoke(host.remote(), args);
            }
        });
        Path journal = dev.gpuctl.hostfiles.TestJournals.DIR.resolve("journal");
        Files.deleteIfExists(journal);
        try (HostLog log = log()) {
            StepRunner r = new StepRunner(remote, log, facts, Duration.ofSeconds(30), null);
            assertTrue(r.apply(List.of(Op.WriteFile.of("conf", f.toString(), "one\n", "0644"))));
            assertEquals(List.of(new dev.gpuctl.hostfiles.HostJournal.FileCreated(f.toString())),
                dev.gpuctl.hostfiles.HostJournal.parse(Files.readString(journal)).entries());
            assertTrue(r.apply(List.of(Op.WriteFile.of("conf", f.toString(), "two\n", "0644"))));
            assertFalse(r.apply(List.of(Op.WriteFile.of("conf", f.toString(), "two\n", "0644"))));
        }
        assertEquals(List.of(new dev.gpuctl.hostfiles.HostJournal.FileCreated(f.toString())),
            dev.gpuctl.hostfiles.HostJournal.parse(Files.readString(journal)).entries(), "a re-run added a line");
        assertEquals(1, Files.readString(journal).lines().count());
        Files.delete(journal);
    }
}
