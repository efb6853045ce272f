package dev.gpuctl.steps;

import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;

/**
 * {@code gpuctl join-token}, on the master: right when {@code checks} say so (the cached join command's token is still
 * valid there); made right by creating a new token with {@link JoinStep#createToken}, the code bootstrap's join uses,
 * whose output teaches the join command's parts (the token masked in the host's log).
 *
 * @param checks what "right" means: the cached command's token still listed and valid on the master; with
 *               {@code --refresh}, a probe that is never right, since a new token is what was asked for
 * @param ttl    the new token's lifetime
 */
public record JoinTokenStep(List<Probe> checks, Duration ttl) implements Step {
    public JoinTokenStep { checks = List.copyOf(checks); }

    @Override public String id() { return "join-token"; }
    @Override public String title() { return "a valid join command for a new worker"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }
    @Override public List<Probe> check(HostContext ctx) { return checks; }

    @Override public List<Op> apply(HostContext ctx) {
        return List.of(JoinStep.createToken(ttl.toSeconds() + "s", "gpuctl join-token"));
    }

    /** The creation's own output proves it: a join command that does not parse fails the capture. */
    @Override public List<Probe> verify(HostContext ctx) { return List.of(); }
}
