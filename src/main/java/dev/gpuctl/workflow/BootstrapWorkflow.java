package dev.gpuctl.workflow;

import dev.gpuctl.engine.ClusterRecord;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.steps.ClusterIdentityStep;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.Steps;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code gpuctl bootstrap}: the bootstrap's phases ({@link Steps}), reduced to the steps named by --only (preflight
 * always runs). After a run that passed preflight and changed hosts, the master's CA hash is recorded on this machine
 * the first time it is known ({@link ClusterRecord}), for the next preflights.
 */
public final class BootstrapWorkflow implements Workflow<Runner.Result> {
    private final Inventory inv;
    private final Set<String> only;
    private final boolean dryRun;
    private final PrintWriter progress;

    public BootstrapWorkflow(Inventory inv, Set<String> only, boolean dryRun, PrintWriter progress) {
        this.inv = inv;
        this.only = only;
        this.dryRun = dryRun;
        this.progress = progress;
    }

    /** The step ids that --only accepts, in order. */
    public static List<String> stepIds() {
        return Steps.ids();
    }

    @Override public List<Phase> first() { return Steps.oneNodeAtATime(Steps.only(only), inv); }

    @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }

    @Override public Runner.Result outcome(Runner.Result last, Facts learned) {
        if (!last.preflightRefused() && !dryRun) recordCluster(learned);
        return last;
    }

    private void recordCluster(Facts learned) {
        Optional<String> ca = ClusterIdentityStep.masterCa(learned, inv.master().name());
        if (ca.isEmpty()) return;
        try {
            if (ClusterRecord.recordIfAbsent(inv, ca.get())) {
                progress.println("recorded the cluster's CA (" + ca.get() + ") in " + ClusterRecord.file(inv));
                progress.flush();
            }
        } catch (IOException e) {
            progress.println("warning: could not record the cluster's CA in " + ClusterRecord.file(inv) + ": " + e.getMessage());
            progress.flush();
        }
    }
}
