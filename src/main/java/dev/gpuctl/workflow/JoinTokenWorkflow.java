package dev.gpuctl.workflow;

import dev.gpuctl.engine.JoinTokens;
import dev.gpuctl.engine.Runner;
import dev.gpuctl.kube.Kubeadm;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.step.Facts;
import dev.gpuctl.steps.JoinStep;
import dev.gpuctl.steps.JoinTokenStep;
import dev.gpuctl.step.Phase;
import dev.gpuctl.step.Probe;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * {@code gpuctl join-token}: a new token on the master ({@link #refresh}, APPLY on the master alone) or the cached
 * join command checked there ({@link #check}, VERIFY on the master alone); the master's commands in its log.
 */
public final class JoinTokenWorkflow {
    private JoinTokenWorkflow() {}

    /** What {@link #refresh} came to: the run, and the join command when the run made one. */
    public record Refreshed(Runner.Result result, Optional<String> command) {}

    /** A new token on the master: the join command completed with the inventory's CRI socket, or empty with the failure in the result. */
    public static Workflow<Refreshed> refresh(Inventory inv, Duration ttl) {
        Probe asked = Probe.of("a new join token (--refresh asks for one)", "true", r -> Optional.of("a new token was asked for"));
        List<Phase> phases = List.of(new Phase("join-token", "a new join token on the master",
            List.of(new JoinTokenStep(List.of(asked), ttl)), false));
        return new Workflow<>() {
            @Override public List<Phase> first() { return phases; }
            @Override public Optional<List<Phase>> next(Runner.Result done) { return Optional.empty(); }
            @Override public Refreshed outcome(Runner.Result last, Facts learned) {
                if (!last.ok()) return new Refreshed(last, Optional.empty());
                Optional<String> endpoint = learned.get(JoinStep.ENDPOINT);
                Optional<String> token = learned.get(JoinStep.TOKEN);
                Optional<String> hash = learned.get(JoinStep.CA_CERT_HASH);
                if (endpoint.isEmpty() || token.isEmpty() || hash.isEmpty()) return new Refreshed(last, Optional.empty());
                return new Refreshed(last, Optional.of(JoinTokens.joinCommand(new Kubeadm.JoinCommand(endpoint.get(), token.get(), hash.get()),
                    inv.cluster().runtime().criSocket())));
            }
        };
    }

    /**
     * Whether the cached command is still valid on the master: {@code kubeadm token list -o json} there, judged by
     * {@link JoinTokens#invalidReason}. The report's one check says.
     */
    public static Workflow<Runner.Result> check(String cachedCommand, Instant now) {
        Probe valid = Probe.of("the cached join command's token is valid on the master", "kubeadm token list -o json",
            r -> r.ok() ? JoinTokens.invalidReason(cachedCommand, r.stdout(), now)
                : Optional.of("kubeadm token list failed (exit " + r.exit() + "): " + Kubeadm.redactTokens(r.tail(3))));
        return Workflow.of(List.of(new Phase("join-token", "the cached join command", List.of(new JoinTokenStep(List.of(valid),
            Duration.ZERO)), true)));
    }
}
