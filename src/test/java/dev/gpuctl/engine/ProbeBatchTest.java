package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.ExecResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The batch script run by this machine's sh: every framed answer equals the command's answer run on its own. */
class ProbeBatchTest {
    static List<ExecResult> batch(List<String> commands) {
        String d = ProbeBatch.newDelimiter();
        ExecResult whole = ShRemote.run(ProbeBatch.script(commands, d));
        return ProbeBatch.parse(whole.stdout(), whole.stderr(), d, commands.size());
    }

    static void assertSameAsOneByOne(List<String> commands) {
        List<ExecResult> batched = batch(commands);
        assertEquals(commands.size(), batched.size(), "every frame came back");
        for (int i = 0; i < commands.size(); i++) assertEquals(ShRemote.run(commands.get(i)), batched.get(i), commands.get(i));
    }

    @Test void outputStderrAndExitStatusOfEachCommand() {
        assertSameAsOneByOne(List.of("echo hi", "echo out; echo err >&2; exit 3", "true", "false", "id -u",
            "printf 'no trailing newline'", "printf 'err without newline' >&2", "printf '\\n\\n\\n'", "printf ''"));
        assertEquals(new ExecResult(3, "out\n", "err\n"), batch(List.of("echo x", "echo out; echo err >&2; exit 3")).get(1));
        assertEquals(new ExecResult(0, "no newline", ""), batch(List.of("printf 'no newline'", "true")).get(0));
    }

    @Test void binaryOutputComesBackAsItWouldAlone() {
        assertSameAsOneByOne(List.of("printf '\\000\\001\\002\\377\\376 x\\r\\n'", "printf '\\303'", "printf 'caf\\303\\251'",
            "printf '\\303' >&2", "head -c 65536 /bin/sh", "head -c 999 /bin/sh >&2"));
    }

    @Test void aCommandThatExitsOrSetsOptionsEndsOnlyItself() {
        assertSameAsOneByOne(List.of("exit 7", "set -e; false; echo never", "echo after", "exec echo replaced", "echo still here",
            "trap 'echo trapped' EXIT; exit 2", "cd /; pwd", "pwd", "x=1; echo $x", "echo \"[$__gpuctl_d][$__gpuctl_x]\""));
    }

    @Test void stdinIsEmpty() {
        assertSameAsOneByOne(List.of("cat", "read line || echo eof", "wc -c"));
    }

    @Test void hugeOutput() {
        List<String> commands = List.of("head -c 5000000 /dev/zero | tr '\\000' x", "seq 1 300000", "seq 1 100000 >&2", "echo small");
        List<ExecResult> r = batch(commands);
        assertEquals(4, r.size());
        assertEquals(5_000_000, r.get(0).stdout().length());
        assertTrue(r.get(1).stdout().endsWith("\n300000\n"));
        assertTrue(r.get(2).stderr().startsWith("1\n2\n"));
        assertEquals(new ExecResult(0, "small\n", ""), r.get(3));
    }

    @Test void aCommandThatSeesTheScriptCannotForgeAFrame() {
        // the script's own command line holds both halves of the delimiter, never the delimiter itself
        String d = ProbeBatch.newDelimiter();
        String script = ProbeBatch.script(List.of("cat /proc/$$/cmdline | tr '\\000' '\\n'", "echo ok"), d);
        assertFalse(script.contains(d));
        ExecResult whole = ShRemote.run(script);
        List<ExecResult> r = ProbeBatch.parse(whole.stdout(), whole.stderr(), d, 2);
        assertEquals(2, r.size());
        assertTrue(r.get(0).stdout().contains("__gpuctl_d"), r.get(0).stdout());
        assertEquals("ok\n", r.get(1).stdout());
        // output that looks like a frame but lacks the delimiter is just output
        assertSameAsOneByOne(List.of("printf '\\n e 0 1\\n'", "printf ' b 1\\n e 1 0\\n' >&2"));
    }

    @Test void aCommandThatKillsTheScriptLeavesTheFramesBeforeIt() {
        List<ExecResult> r = batch(List.of("echo a", "echo b; kill -9 $$", "echo c"));
        assertEquals(List.of(new ExecResult(0, "a\n", "")), r);
    }

    @Test void aCutOrMissingFrameEndsTheParse() {
        String d = "gpuctl-0123456789abcdef";
        String out = d + " b 0\nx\n" + d + " e 0 0\n" + d + " b 1\ny\n" + d + " e 1 5\n";
        String err = d + " b 0\n\n" + d + " e 0\n" + d + " b 1\n\n" + d + " e 1\n";
        assertEquals(List.of(new ExecResult(0, "x", ""), new ExecResult(5, "y", "")), ProbeBatch.parse(out, err, d, 2));
        assertEquals(1, ProbeBatch.parse(out.substring(0, out.length() - 3), err, d, 2).size(), "exit status cut");
        assertEquals(1, ProbeBatch.parse(out, err.substring(0, err.length() - 4), d, 2).size(), "stderr end missing");
        assertEquals(0, ProbeBatch.parse("", "", d, 2).size());
        assertEquals(0, ProbeBatch.parse(out.replace(" e 0 0", " e 0 zero"), err, d, 2).size(), "exit status not a number");
        // text before the first frame (a login banner, sudo's warning) is not part of any answer
        assertEquals(ProbeBatch.parse(out, err, d, 2), ProbeBatch.parse("banner\n" + out, "sudo: warning\n" + err, d, 2));
    }

    @Test void delimitersDiffer() {
        assertFalse(ProbeBatch.newDelimiter().equals(ProbeBatch.newDelimiter()));
    }

    @Test void theCommandRunningWhenOutputStoppedIsTheOneThatHadBegunAndNotEnded() {
        String d = ProbeBatch.newDelimiter();
        String whole = ShRemote.run(ProbeBatch.script(List.of("echo a", "echo b", "echo c"), d)).stdout();
        // output cut while the second command ran: its begin line is there, its end line is not
        String cut = whole.substring(0, whole.indexOf(d + " b 1\n") + (d + " b 1\n").length()) + "partial output of b";
        assertEquals(1, ProbeBatch.running(cut, d, 3));
        assertEquals(-1, ProbeBatch.running(whole, d, 3), "every command ended");
        assertEquals(-1, ProbeBatch.running("", d, 3), "none began (e.g. a login banner was all)");
        String betweenFrames = whole.substring(0, whole.indexOf(d + " b 2\n"));
        assertEquals(-1, ProbeBatch.running(betweenFrames, d, 3), "the first two ended, the third had not begun");
    }
}
