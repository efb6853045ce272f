package dev.gpuctl.engine;

import dev.gpuctl.hostconf.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.UpgradeSteps;

/** {@code gpuctl upgrade} on the one engine: its phases planned offline, or run. */
public final class Upgrades {
    private Upgrades() {}

    /** The upgrade's phases and each host's commands, offline (upgrade --dry-run, plan --upgrade). */
    public static Plan plan(Inventory inv, UpgradePolicy.Options o) {
        return Plan.of(inv, UpgradeSteps.phases(inv, o));
    }

    /** Runs the upgrade's phases: preflight (read-only, refuses before any change), the master, the workers' batches. */
    public static Runner.Result run(Runner runner, Inventory inv, UpgradePolicy.Options o) {
        return runner.run(UpgradeSteps.phases(inv, o));
    }
}
