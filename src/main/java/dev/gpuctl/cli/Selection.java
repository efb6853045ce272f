package dev.gpuctl.cli;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.workflow.BootstrapWorkflow;
import java.util.List;

/** The --only and --hosts values of plan and bootstrap, checked against the step ids and the inventory (exit 2). */
final class Selection {
    private Selection() {}

    static void checkSteps(List<String> only) {
        for (String s : only) {
            if (!BootstrapWorkflow.stepIds().contains(s)) {
                throw new GpuctlException(ExitCode.USAGE, "unknown step '" + s + "' for --only (expected: " + String.join(", ", BootstrapWorkflow.stepIds()) + ")");
            }
        }
    }

    static void checkHosts(Inventory inv, List<String> hosts) {
        for (String h : hosts) {
            if (inv.node(h).isEmpty()) {
                throw new GpuctlException(ExitCode.USAGE, "unknown host '" + h + "' for --hosts (the inventory has: "
                    + String.join(", ", inv.nodes().stream().map(n -> n.name()).toList()) + ")");
            }
        }
    }
}
