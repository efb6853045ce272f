package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Probe;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** verify reports cordoned nodes of the inventory; bootstrap's steps do not include the check. */
class SchedulingStepTest {
    /** A node's line in kubectl's answer to the cluster question, with its spec.unschedulable as kubectl prints it. */
    static String node(String name, String unschedulable) { return "N\t" + name + "\t{}\t\t" + unschedulable + "\t\t{}\t[]\t\n"; }

    @Test void verifyNamesTheInventorysCordonedNodesOnly() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        Probe p = new SchedulingStep().check(new HostContext(inv, inv.master())).get(0);
        assertEquals(Optional.of("w1 is cordoned (SchedulingDisabled): no new pods there; `gpuctl uncordon w1` ends the maintenance"),
            p.judge().apply(new ExecResult(0, node("m1", "") + node("w1", "true") + node("other", "true"), ""), new Facts()));
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, node("m1", "") + node("w1", "false"), ""), new Facts()));
        assertTrue(p.judge().apply(new ExecResult(1, "", "connection refused\n"), new Facts()).orElseThrow().startsWith("kubectl failed (exit 1)"));
        assertTrue(Steps.verifyPhases().stream().anyMatch(ph -> ph.steps().stream().anyMatch(s -> s instanceof SchedulingStep)));
        assertFalse(Steps.phases().stream().anyMatch(ph -> ph.steps().stream().anyMatch(s -> s instanceof SchedulingStep)));
    }
}
