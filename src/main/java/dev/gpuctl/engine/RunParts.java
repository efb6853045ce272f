package dev.gpuctl.engine;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Facts;
import java.io.PrintWriter;
import java.util.Map;

/**
 * The parts of one {@link Runner} that its apply path ({@link HostSteps}) and its verify path ({@link VerifyChecks})
 * both work with: the inventory, the hosts' connections and logs, what the run learned, its options, the progress
 * stream, and where each host stopped after a stop request (shared with the runner's summary).
 */
record RunParts(Inventory inv, HostRun run, Facts facts, Runner.Options options, PrintWriter progress, Map<String, String> stoppedAt) {}
