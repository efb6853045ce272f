package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.step.Probe;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How many probes go to a host in one script: a command asked by many probes is in the script once. */
class StepRunnerRunEndTest {
    static final String READ = "kubectl get nodes,pods -A -o 'jsonpath=" + "x".repeat(1000) + "'";

    @Test void theSameCommandAskedFor600NodesIsOneScript() {
        List<Probe> probes = new ArrayList<>();
        for (int i = 0; i < 600; i++) probes.add(Probe.succeeds("node n" + i + " Ready", READ));
        assertEquals(600, ProbeAnswers.runEnd(probes, 0));
    }

    @Test void distinctCommandsAreStillSplitAtTheScriptLimit() {
        List<Probe> probes = new ArrayList<>();
        for (int i = 0; i < 600; i++) probes.add(Probe.succeeds("file " + i, "cat /etc/f" + i + " " + "y".repeat(1000)));
        int end = ProbeAnswers.runEnd(probes, 0);
        assertTrue(end > 1 && end < 600, "one script of " + end + " probes");
        assertTrue(ProbeBatch.scriptLength(probes.subList(0, end).stream().map(Probe::command).toList()) <= ProbeBatch.MAX_SCRIPT_CHARS);
    }

    @Test void aProbeThatUsesAFactStartsAScriptOfItsOwn() {
        List<Probe> probes = List.of(Probe.succeeds("a", READ), Probe.succeeds("b", READ), Probe.succeeds("c", "test -f {{some.fact}}"));
        assertEquals(2, ProbeAnswers.runEnd(probes, 0));
    }
}
