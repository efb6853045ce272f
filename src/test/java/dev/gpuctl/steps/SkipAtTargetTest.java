package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.SkipAtTarget;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A step with nothing to do where its condition holds: its probes answer "right" without asking; else its own. */
class SkipAtTargetTest {
    static final Probe COUNT = Probe.of("node w1 cordoned", "kubectl get node w1", r -> Optional.of("w1 is schedulable"))
        .learning(r -> Map.of("x", "1"));

    @Test void theConditionRunsFirstAndAnsweringItSkipsTheProbe() {
        SkipAtTarget s = new SkipAtTarget(new CordonStep(java.util.List.of("w1"), true), "test -e /at-target", "w1 at 1.35");
        Probe g = s.guarded(COUNT);
        assertTrue(g.command().startsWith("if { test -e /at-target; } >/dev/null 2>&1; then echo 'gpuctl: nothing to do here: w1 at 1.35'; exit 0; fi; "), g.command());
        assertTrue(g.command().endsWith("kubectl get node w1"), g.command());
        ExecResult skipped = new ExecResult(0, "gpuctl: nothing to do here: w1 at 1.35\n", "");
        ExecResult asked = new ExecResult(0, "", "");
        assertEquals(Optional.empty(), g.judge().apply(skipped, new Facts()));
        assertEquals(Map.of(), g.learn().apply(skipped));
        assertFalse(g.settling().test(skipped));
        assertEquals(Optional.of("w1 is schedulable"), g.judge().apply(asked, new Facts()));
        assertEquals(Map.of("x", "1"), g.learn().apply(asked));
        assertEquals("cordon", s.id());
        assertEquals(s.apply(null).size(), new CordonStep(java.util.List.of("w1"), true).apply(null).size(), "its apply is the step's own");
    }
}
