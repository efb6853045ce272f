package dev.gpuctl.workflow;

import dev.gpuctl.engine.Repairs;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.engine.StepFailure;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code gpuctl repair} as one engine session: the diagnosis round (read-only, no lock), then for each sick node, one
 * after the other, the jobs held safe and the remedies, the proof (only when the remedies went through), and the record
 * (the uncordon only when proved). The lock is taken before the first remedy and held to the last record; a reboot's
 * node is connected to again for its proof ({@code HostRun}). The session ends early when a node's jobs could not be
 * held safe (the drain stopped) or its record failed; {@link Report} says where, for the command to judge.
 */
public final class RepairWorkflow implements Workflow<RepairWorkflow.Report> {
    /** The round the session ran last. */
    public enum Stage { DIAGNOSE, REMEDY, PROOF, RECORD, DONE }

    /** What the command says as the session goes: the plans once diagnosed, each node left or repaired. */
    public interface Listener {
        void diagnosed(Repairs.Diagnoses diagnoses);

        /** {@code node} is healthy: nothing done to it. */
        void healthy(String node);

        /** {@code d}'s remedies went through; its proof starts (whether DCGM's diagnostic is part of it is said here). */
        default void proving(Repairs.Diagnosis d) {}

        /** {@code o}'s node was repaired (proved or not) and its record written on the cluster. */
        void repaired(Repairs.Outcome o);
    }

    /**
     * How the session ended.
     *
     * @param stage      the round it ran last ({@link Stage#DONE}: every node was handled, or a dry run's diagnosis)
     * @param diagnoses  the diagnosis, once its round ran
     * @param node       the node of the last round, its outcome once its proof (or failed remedies) decided it
     * @param outcomes   every node whose record was written, in order
     */
    public record Report(Runner.Result last, Stage stage, Optional<Repairs.Diagnoses> diagnoses, Optional<Repairs.Diagnosis> node,
                         Optional<Repairs.Outcome> outcome, List<Repairs.Outcome> outcomes) {
        public Report {
            outcomes = List.copyOf(outcomes);
        }
    }

    /** The steps that hold a node's jobs safe: when one fails, the repair stops there (nothing else is tried). */
    static final Set<String> HOLD_STEPS = Set.of("cordon", "gpu-jobs", "drain");

    private final Inventory inv;
    private final List<String> nodes;
    private final boolean reboot;
    private final boolean dryRun;
    private final Duration drainTimeout;
    private final boolean force;
    private final Listener listener;
    private Facts learned = new Facts();
    private Stage stage = Stage.DIAGNOSE;
    private Repairs.Diagnoses diagnoses;
    private Iterator<Repairs.Diagnosis> pending;
    private Repairs.Diagnosis current;
    private Instant began;
    private Repairs.Outcome outcome;
    private final List<Repairs.Outcome> outcomes = new ArrayList<>();

    /**
     * @param nodes  the GPU nodes to repair, in order, each once
     * @param reboot reboot them whatever the diagnosis says
     * @param dryRun only the diagnosis
     * @param force  evict the GPU jobs instead of waiting for them
     */
    public RepairWorkflow(Inventory inv, List<String> nodes, boolean reboot, boolean dryRun, Duration drainTimeout, boolean force,
                          Listener listener) {
        this.inv = inv;
        this.nodes = List.copyOf(nodes);
        this.reboot = reboot;
        this.dryRun = dryRun;
        this.drainTimeout = drainTimeout;
        this.force = force;
        this.listener = listener;
    }

    @Override public void learning(Facts learned) { this.learned = learned; }

    @Override public List<Phase> first() { return Repairs.diagnosePhases(nodes); }

    @Override public Optional<List<Phase>> next(Runner.Result done) {
        switch (stage) {
            case DIAGNOSE -> {
                diagnoses = Repairs.diagnoses(inv, nodes, reboot, done, learned);
                if (!diagnoses.unreachable().isEmpty()) return Optional.empty();
                listener.diagnosed(diagnoses);
                pending = diagnoses.nodes().values().iterator();
                if (dryRun) {
                    stage = Stage.DONE;
                    return Optional.empty();
                }
                return nextNode();
            }
            case REMEDY -> {
                if (holdFailed(done)) return Optional.empty();
                if (!done.failures().isEmpty()) return record(Repairs.stillWrong(done));
                stage = Stage.PROOF;
                listener.proving(current);
                return Optional.of(Repairs.proofPhases(current));
            }
            case PROOF -> {
                return record(Repairs.stillWrong(done));
            }
            case RECORD -> {
                if (!done.failures().isEmpty()) return Optional.empty();
                outcomes.add(outcome);
                listener.repaired(outcome);
                return nextNode();
            }
            default -> {
                return Optional.empty();
            }
        }
    }

    /** The jobs could not be held safe (cordon, the GPU jobs' wait, the drain), or a host could not be reached at all. */
    public static boolean holdFailed(Runner.Result r) {
        return r.failures().stream().map(StepFailure::step).anyMatch(HOLD_STEPS::contains) || r.failures().stream().anyMatch(StepFailure::unreachable);
    }

    /** The next sick node's remedies (the healthy ones said and left), or the end. */
    private Optional<List<Phase>> nextNode() {
        while (pending.hasNext()) {
            Repairs.Diagnosis d = pending.next();
            if (d.plan().healthy()) {
                listener.healthy(d.facts().node());
                continue;
            }
            current = d;
            outcome = null;
            began = Instant.now();
            stage = Stage.REMEDY;
            return Optional.of(Repairs.remedyPhases(d, drainTimeout, force));
        }
        current = null;
        stage = Stage.DONE;
        return Optional.empty();
    }

    private Optional<List<Phase>> record(List<String> stillWrong) {
        boolean proofRan = stage == Stage.PROOF;
        boolean proved = stillWrong.isEmpty();
        String dcgm = !proofRan ? "not run (the remedies failed)" : current.dcgmi() ? (proved ? "passed" : "ran (see stillWrong)")
            : "skipped: DCGM is not installed on the host";
        outcome = new Repairs.Outcome(current.facts().node(), current.plan(), proved, stillWrong, began,
            Duration.between(began, Instant.now()), current.clock(), dcgm);
        stage = Stage.RECORD;
        return Optional.of(Repairs.recordPhases(outcome));
    }

    @Override public Report outcome(Runner.Result last, Facts learned) {
        // a diagnosis refused (a host not reached) ends the session before next() saw it
        if (stage == Stage.DIAGNOSE && diagnoses == null) diagnoses = Repairs.diagnoses(inv, nodes, reboot, last, learned);
        return new Report(last, stage, Optional.ofNullable(diagnoses), Optional.ofNullable(current), Optional.ofNullable(outcome), outcomes);
    }
}
