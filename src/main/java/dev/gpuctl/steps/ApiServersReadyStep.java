package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.List;

import static dev.gpuctl.steps.UpgradeSteps.*;

/**
 * Before a master goes down: every other master's API server answers {@code /readyz} (curl, any certificate: the
 * question is only whether it is ready). One that does not is a refusal naming it.
 */
final class ApiServersReadyStep implements Step {
    private final Node master;
    private final List<Node> others;

    ApiServersReadyStep(Node master, List<Node> others) { this.master = master; this.others = List.copyOf(others); }

    @Override public String id() { return "api-servers-ready"; }
    @Override public String title() { return "the API servers of " + others.stream().map(Node::name).toList() + " ready"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().name().equals(master.name()); }
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }

    @Override public List<Probe> check(HostContext ctx) {
        return others.stream().map(n -> Probe.of(n.name() + "'s API server ready (" + apiServerUrl(n) + "/readyz)",
            readyz(n), r -> notReady(master, n, r.exit(), r.stdout() + r.stderr()))).toList();
    }

    static String readyz(Node n) {
        return "curl -sk --max-time 5 -o /dev/null -w '%{http_code}' " + ShellWords.quote(apiServerUrl(n) + "/readyz");
    }
}
