package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.steps.CertsRenewStep;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.Phase;
import dev.gpuctl.steps.Steps;
import dev.gpuctl.steps.UpgradeSteps;
import java.util.List;
import java.util.Optional;

/**
 * The read-only commands and certs renew: {@code gpuctl verify} (every step's proof), {@code certs check} (the
 * certificates' checks alone) and {@code certs renew} (preflight, then the renewal on the master, then its check).
 * verify and certs check run with {@link Runner.Options#verify}; renew on the master alone.
 */
public final class VerifyWorkflow {
    private VerifyWorkflow() {}

    /** {@code gpuctl verify}: every step's proof. */
    public static Workflow<Runner.Result> verify() {
        return Workflow.of(Steps.verifyPhases());
    }

    /** Only the certificate checks ({@code gpuctl certs check}, and after {@code gpuctl certs renew}). */
    public static Workflow<Runner.Result> certificates() {
        return Workflow.of(List.of(Steps.certificates()));
    }

    /** {@code gpuctl certs renew}: the bootstrap's preflight, then the renewal on the master ({@link CertsRenewStep}). */
    public static Workflow<Runner.Result> renewCertificates() {
        return Workflow.of(List.of(Steps.phases().get(0), new Phase("certs-renew", "control-plane certificates renewed",
            List.of(new CertsRenewStep()), false)));
    }

    /**
     * {@code gpuctl certs renew} on a control plane of several masters: the bootstrap's preflight, then each master in
     * inventory order, one at a time, as its own round: the other masters' API servers ready (refused otherwise: the
     * VIP keeps a ready backend while this master's API server restarts), then its renewal ({@link CertsRenewStep#on}).
     * A refusal or failure ends the command; the masters before it keep their new certificates.
     */
    public static Workflow<Runner.Result> renewCertificates(Inventory inv) {
        if (!inv.highlyAvailable()) return renewCertificates();
        List<Node> masters = inv.masters();
        return new Workflow<>() {
            private int next;

            @Override public List<Phase> first() { return List.of(Steps.phases().get(0)); }

            @Override public Optional<List<Phase>> next(Runner.Result done) {
                if (!done.ok() || next >= masters.size()) return Optional.empty();
                return Optional.of(renewalOn(inv, masters.get(next++)));
            }

            @Override public Runner.Result outcome(Runner.Result last, Facts learned) { return last; }
        };
    }

    /** One master's round of an HA renewal: the others' API servers ready (read-only), then its renewal. */
    public static List<Phase> renewalOn(Inventory inv, Node m) {
        return List.of(UpgradeSteps.apiServersReady(inv, m),
            new Phase("certs-renew", "control-plane certificates renewed on " + m.name(), List.of(CertsRenewStep.on(m.name())), false));
    }
}
