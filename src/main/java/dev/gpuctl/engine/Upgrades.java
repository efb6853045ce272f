package dev.gpuctl.engine;

import dev.gpuctl.hostconf.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.NodePhases;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.UpgradeSteps;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code gpuctl upgrade} on the one engine: preflight and the control-plane backup in one run (a refusal changes
 * nothing; the backup is checked before anything changes), the master's phases in the next, then each batch of workers in a run of its own, so that a batch whose drain gives up on a running GPU job
 * is uncordoned and left, and the next batch goes on. Ctrl-C stops the run in progress and starts no other.
 */
public final class Upgrades {
    private Upgrades() {}

    /** The upgrade's phases and each host's commands, offline (upgrade --dry-run, plan --upgrade). */
    public static Plan plan(Inventory inv, UpgradePolicy.Options o) {
        return Plan.of(inv, UpgradeSteps.phases(inv, o, Backups.newArchive(inv, Instant.now())));
    }

    /** The runners' command timeout: at least {@code yours}, and long enough for a drain bounded by --drain-timeout. */
    public static Duration commandTimeout(UpgradePolicy.Options o, Duration yours) {
        return NodePhases.commandTimeout(o.drainTimeout(), yours);
    }

    /**
     * How an upgrade ended.
     *
     * @param result  the last run's result: not {@link Runner.Result#ok()} when the upgrade stopped (refused, failed,
     *                interrupted)
     * @param left    one line per node left because a GPU job still runs there ("w1: still runs ns/pod on 2 GPUs; ...")
     * @param changed whether any step changed anything
     * @param backup  the control-plane backup taken before the first change, checked; empty when none was needed
     */
    public record Outcome(Runner.Result result, List<String> left, boolean changed, Optional<Backups.Done> backup) {}

    /** One upgrade: runners made by {@code runners} (one per run); {@link #requestStop}/{@link #abort} reach the current one. */
    public static final class Run {
        private final Supplier<Runner> runners;
        private final Inventory inv;
        private final UpgradePolicy.Options o;
        private final Path backup;
        private final PrintWriter progress;
        private volatile Runner current;
        private volatile boolean stopping;

        /** @param backup where the control-plane backup goes (Backups.newArchive) */
        public Run(Supplier<Runner> runners, Inventory inv, UpgradePolicy.Options o, Path backup, PrintWriter progress) {
            this.runners = runners;
            this.inv = inv;
            this.o = o;
            this.backup = backup;
            this.progress = progress;
        }

        public void requestStop() {
            stopping = true;
            Runner r = current;
            if (r != null) r.requestStop();
        }

        public void abort() {
            stopping = true;
            Runner r = current;
            if (r != null) r.abort();
        }

        private Runner.Result run(List<Phase> phases) {
            Runner r = runners.get();
            current = r;
            if (stopping) r.requestStop();
            return r.run(phases);
        }

        public Outcome run() {
            List<String> left = new ArrayList<>();
            Runner.Result res = run(UpgradeSteps.preparePhases(inv, o, backup));
            boolean changed = changed(res);
            // the backup is checked before the first change: a bad one stops the upgrade here
            Optional<Backups.Done> done = Files.exists(backup) ? Optional.of(Backups.finish(inv, backup, Backups.DEFAULT_KEEP)) : Optional.empty();
            if (!res.ok() || stopping) return new Outcome(res, left, changed, done);
            res = run(UpgradeSteps.masterPhases(inv, o));
            changed |= changed(res);
            if (!res.ok()) return new Outcome(res, left, changed, done);
            List<List<String>> batches = UpgradeSteps.batches(inv, o);
            for (int i = 0; i < batches.size() && !stopping; i++) {
                List<String> batch = batches.get(i);
                res = run(UpgradeSteps.batchPhases(inv, o, batch, UpgradeSteps.label(i, batches)));
                changed |= changed(res);
                if (res.ok() || res.wasInterrupted()) {
                    if (res.wasInterrupted()) return new Outcome(res, left, changed, done);
                    continue;
                }
                List<String> jobs = res.failures().stream().filter(f -> f.step().equals("gpu-jobs")).map(StepFailure::detail).toList();
                if (jobs.size() != res.failures().size() || jobs.isEmpty()) return new Outcome(res, left, changed, done);
                left.addAll(jobs.stream().flatMap(String::lines).toList());
                progress.println("leaving " + String.join(", ", batch) + " for now: a GPU job still runs there; uncordoning it");
                progress.flush();
                res = run(List.of(NodePhases.uncordon(batch)));
                if (!res.ok()) return new Outcome(res, left, changed, done);
            }
            return new Outcome(res, left, changed, done);
        }

        private static boolean changed(Runner.Result r) {
            return r.outcomes().values().stream().anyMatch(m -> m.containsValue(Runner.Outcome.CHANGED));
        }
    }
}
