package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Facts;
import java.io.PrintWriter;
import java.util.Map;

/**
 * A part of a {@link Runner} that works over the run's parts ({@link RunParts}): its apply path ({@link HostSteps}) and
 * its verify path ({@link VerifyChecks}).
 */
abstract class RunPart {
    final Inventory inv;
    final HostRun run;
    final Facts facts;
    final Runner.Options options;
    final PrintWriter progress;
    /** Where each host stopped after a stop request, shared with the runner's summary. */
    final Map<String, String> stoppedAt;

    RunPart(RunParts parts) {
        this.inv = parts.inv();
        this.run = parts.run();
        this.facts = parts.facts();
        this.options = parts.options();
        this.progress = parts.progress();
        this.stoppedAt = parts.stoppedAt();
    }
}
