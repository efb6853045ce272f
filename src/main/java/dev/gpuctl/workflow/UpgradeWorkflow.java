package dev.gpuctl.workflow;

import dev.gpuctl.engine.Backups;
import dev.gpuctl.engine.Plan;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.kube.UpgradePolicy;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.FailureKind;
import dev.gpuctl.steps.NodePhases;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.UpgradeSteps;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl upgrade} as rounds of one engine session: preflight and the control-plane backup (a refusal changes
 * nothing; the backup is checked before anything changes), then the first master's phases ({@code kubeadm upgrade
 * apply}), then each other master's ({@code kubeadm upgrade node}), one master a round, each round refused unless the
 * other masters' API servers are ready, then each batch of workers. A
 * batch whose drain finds GPU jobs still running ({@link FailureKind#GPU_JOBS_RUNNING}) is uncordoned and left, and the
 * next batch goes on; any other failure ends the upgrade. The cluster's lock is held from the first change to the last
 * batch, so no bootstrap or other command slips in between two batches.
 */
public final class UpgradeWorkflow implements Workflow<UpgradeWorkflow.Outcome> {
    /**
     * How an upgrade ended.
     *
     * @param result  the session's result: not {@link Runner.Result#ok()} when the upgrade stopped (refused, failed,
     *                interrupted)
     * @param left    one line per node left because a GPU job still runs there ("w1: still runs ns/pod on 2 GPUs; ...")
     * @param changed whether any step changed anything
     * @param backup  the control-plane backup taken before the first change, checked; empty when none was needed
     * @param mastersDone the masters whose round completed, in order (a refusal after them changed nothing more)
     */
    public record Outcome(Runner.Result result, List<String> left, boolean changed, Optional<Backups.Done> backup,
                          List<String> mastersDone) {}

    /** Where the session is: each round's result is judged by what that round was. */
    private enum Stage { PREPARE, MASTER, BATCH, UNCORDON }

    private final Inventory inv;
    private final UpgradePolicy.Options o;
    private final Path backup;
    private final PrintWriter progress;
    private final List<List<String>> batches;
    private final List<Node> masters;
    private final List<String> mastersDone = new ArrayList<>();
    private int nextMaster;
    private final List<String> left = new ArrayList<>();
    private Optional<Backups.Done> done = Optional.empty();
    private Stage stage = Stage.PREPARE;
    private int nextBatch;

    /** @param backup where the control-plane backup goes ({@link Backups#newArchive}) */
    public UpgradeWorkflow(Inventory inv, UpgradePolicy.Options o, Path backup, PrintWriter progress) {
        this.inv = inv;
        this.o = o;
        this.backup = backup;
        this.progress = progress;
        this.batches = UpgradeSteps.batches(inv, o);
        this.masters = inv.masters();
    }

    /** The upgrade's phases and each host's commands, offline (plan --upgrade). */
    public static Plan plan(Inventory inv, UpgradePolicy.Options o) {
        return Plan.of(inv, UpgradeSteps.phases(inv, o, Backups.newArchive(inv, Instant.now())));
    }

    /** The session's command timeout: at least {@code yours}, and long enough for a drain bounded by --drain-timeout. */
    public static Duration commandTimeout(UpgradePolicy.Options o, Duration yours) {
        return NodePhases.commandTimeout(o.drainTimeout(), yours);
    }

    @Override public List<Phase> first() {
        return UpgradeSteps.preparePhases(inv, o, backup);
    }

    @Override public Optional<List<Phase>> next(Runner.Result round) {
        switch (stage) {
            case PREPARE -> {
                // the backup is checked before the first change: a bad one stops the upgrade here (Backups.Bad)
                if (Files.exists(backup)) done = Optional.of(Backups.finish(inv, backup, Backups.DEFAULT_KEEP));
                if (!round.ok()) return Optional.empty();
                stage = Stage.MASTER;
                nextMaster = 1;
                return Optional.of(UpgradeSteps.masterPhases(inv, o));
            }
            case MASTER -> {
                if (!round.ok()) return Optional.empty();
                mastersDone.add(masters.get(nextMaster - 1).name());
                if (nextMaster < masters.size()) {
                    Node m = masters.get(nextMaster++);
                    return Optional.of(UpgradeSteps.otherMasterPhases(inv, o, m));
                }
                return nextBatch();
            }
            case UNCORDON -> {
                return round.ok() ? nextBatch() : Optional.empty();
            }
            case BATCH -> {
                if (round.ok()) return nextBatch();
                List<String> busy = gpuJobsLeft(round.failures());
                if (busy.isEmpty()) return Optional.empty();
                List<String> batch = batches.get(nextBatch - 1);
                left.addAll(busy);
                progress.println("leaving " + String.join(", ", batch) + " for now: a GPU job still runs there; uncordoning it");
                progress.flush();
                stage = Stage.UNCORDON;
                return Optional.of(List.of(NodePhases.uncordon(batch)));
            }
            default -> throw new IllegalStateException(stage.toString());
        }
    }

    /**
     * What each node still runs, when every failure of a batch is a drain that found GPU jobs running; empty when any
     * failure is of another kind (that one ends the upgrade).
     */
    static List<String> gpuJobsLeft(List<StepFailure> failures) {
        if (failures.isEmpty() || !failures.stream().allMatch(f -> f.kind() == FailureKind.GPU_JOBS_RUNNING)) return List.of();
        return failures.stream().map(StepFailure::detail).flatMap(String::lines).toList();
    }

    private Optional<List<Phase>> nextBatch() {
        if (nextBatch >= batches.size()) return Optional.empty();
        int i = nextBatch++;
        stage = Stage.BATCH;
        return Optional.of(UpgradeSteps.batchPhases(inv, o, batches.get(i), UpgradeSteps.label(i, batches)));
    }

    @Override public Outcome outcome(Runner.Result last, Facts learned) {
        // stopped in the first round (Ctrl-C while the backup was taken): the archive is checked all the same
        if (stage == Stage.PREPARE && done.isEmpty() && Files.exists(backup)) done = Optional.of(Backups.finish(inv, backup, Backups.DEFAULT_KEEP));
        boolean changed = last.outcomes().values().stream().anyMatch(m -> m.containsValue(Runner.Outcome.CHANGED));
        return new Outcome(last, List.copyOf(left), changed, done, List.copyOf(mastersDone));
    }
}
