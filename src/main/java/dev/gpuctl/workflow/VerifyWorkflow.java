package dev.gpuctl.workflow;

import dev.gpuctl.engine.Runner;
import dev.gpuctl.steps.CertsRenewStep;
import dev.gpuctl.steps.Phase;
import dev.gpuctl.steps.Steps;
import java.util.List;

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
}
