package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.steps.AdminKubeconfigStep;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl kubeconfig}: the master's admin.conf read in one read-only session on the master alone (its command in
 * the master's log, its content not: a secret); the command rebuilds and prints or merges it on this machine.
 */
public final class KubeconfigWorkflow implements Workflow<KubeconfigWorkflow.Read> {
    /** The session's result, and {@code cat admin.conf}'s whole answer when it was asked. */
    public record Read(Runner.Result result, Optional<ExecResult> admin) {}

    @Override public List<Phase> first() {
        return List.of(new Phase("kubeconfig", "the cluster's admin kubeconfig", List.of(new AdminKubeconfigStep()), true));
    }

    @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }

    @Override public Read outcome(Runner.Result last, Facts learned) {
        return new Read(last, learned.kept(AdminKubeconfigStep.KEY));
    }
}
