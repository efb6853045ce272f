package dev.gpuctl.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.remote.ExecResult;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** verify reports cordoned nodes of the inventory; bootstrap's steps do not include the check. */
class SchedulingStepTest {
    @Test void verifyNamesTheInventorysCordonedNodesOnly() {
        Inventory inv = SchedulableStepTest.inventory(false, false);
        Probe p = new SchedulingStep().check(new HostContext(inv, inv.master())).get(0);
        assertEquals(Optional.of("w1 is cordoned (SchedulingDisabled): no new pods there; `gpuctl uncordon w1` ends the maintenance"),
            p.judge().apply(new ExecResult(0, "m1\t\nw1\ttrue\nother\ttrue\n", ""), new Facts()));
        assertEquals(Optional.empty(), p.judge().apply(new ExecResult(0, "m1\t\nw1\t\n", ""), new Facts()));
        assertTrue(p.judge().apply(new ExecResult(1, "", "connection refused\n"), new Facts()).orElseThrow().startsWith("kubectl failed (exit 1)"));
        assertTrue(Steps.verifyPhases().stream().anyMatch(ph -> ph.steps().stream().anyMatch(s -> s instanceof SchedulingStep)));
        assertFalse(Steps.phases().stream().anyMatch(ph -> ph.steps().stream().anyMatch(s -> s instanceof SchedulingStep)));
    }
}
