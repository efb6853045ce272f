package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gpuctl.text.Json;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A node's kubelet.conf pointed at the controlPlaneEndpoint ({@code kubectl config set-cluster --server}) and its
 * kubelet restarted and waited for until its node is Ready through the endpoint; after {@link EndpointStep} moved the
 * cluster. The first master and the workers (a master that joined later talks to its own API server: kubeadm's
 * ControlPlaneKubeletLocalMode). Bootstrap gives each node a phase of its own ({@link Steps#oneNodeAtATime}), so
 * kubelets restart one node at a time; a kubelet restart leaves running containers alone (no GPU job is restarted). A
 * node not joined yet has no kubelet.conf: nothing to do (it joins through the endpoint).
 */
public final class KubeletEndpointStep implements Step {
    static final String KUBELET_CONF = ClusterIdentityStep.KUBELET_CONF;
    /** The kubelet re-registers and posts Ready within a few status updates of its start. */
    static final Duration READY_WAIT = Duration.ofSeconds(120);

    private final Optional<String> node;

    /** Every node's kubelet (in parallel, as verify reads them). */
    public KubeletEndpointStep() { this(Optional.empty()); }

    /** Only this node's kubelet (bootstrap's phase for it). */
    public KubeletEndpointStep(Optional<String> node) { this.node = node; }

    public static final String ID = "endpoint-kubelets";

    @Override public String id() { return ID; }
    @Override public String title() {
        return "kubelet.conf pointed at the controlPlaneEndpoint, the kubelet restarted" + node.map(n -> " (on " + n + ")").orElse(" (one node at a time)");
    }
    @Override public boolean runsOn(HostContext ctx) {
        Node n = ctx.node();
        return (!n.isMaster() || ctx.firstMaster()) && node.map(n.name()::equals).orElse(true);
    }

    static Probe server(HostContext ctx) {
        return Probe.of("kubelet.conf names the controlPlaneEndpoint",
                "if [ -f " + KUBELET_CONF + " ]; then sed -n 's/^[[:space:]]*server:[[:space:]]*//p' " + KUBELET_CONF + "; fi", r -> Optional.empty())
            .judgedWithFacts((r, facts) -> {
                if (!r.ok()) return Optional.of("cannot read " + KUBELET_CONF + ": exit " + r.exit() + Probe.stderrHint(r));
                String want;
                try {
                    want = "https://" + facts.substitute(ControlPlaneStep.endpoint(ctx));
                } catch (IllegalStateException notLearned) { // the master named by host name and not asked in this run
                    return Optional.empty();
                }
                List<String> wrong = r.stdout().lines().map(String::strip).filter(s -> !s.isEmpty() && !s.equals(want)).toList();
                return wrong.isEmpty() ? Optional.empty() : Optional.of(KUBELET_CONF + " names " + String.join(", ", wrong) + ", not " + want);
            });
    }

    /** The node is Ready, asked with the kubelet's own credentials through the endpoint. */
    static Probe ready(HostContext ctx) {
        String name = ctx.node().name();
        return Probe.of("node " + name + " Ready through the endpoint (kubectl --kubeconfig=kubelet.conf get node)",
                "if [ -f " + KUBELET_CONF + " ]; then kubectl --kubeconfig=" + KUBELET_CONF + " get node " + ShellWords.quote(name) + " -o json; fi",
                r -> {
                    if (!r.ok()) return Optional.of("the API server did not answer through the endpoint" + Probe.stderrHint(r)
                        + " (journalctl -u kubelet on " + name + ")");
                    if (r.stdout().isBlank()) return Optional.empty();
                    JsonNode n;
                    try {
                        n = Json.MAPPER.readTree(r.stdout());
                    } catch (java.io.IOException e) {
                        return Optional.of("unexpected answer: " + e.getMessage());
                    }
                    for (JsonNode c : n.path("status").path("conditions")) {
                        if (c.path("type").asText().equals("Ready") && c.path("status").asText().equals("True")) return Optional.empty();
                    }
                    return Optional.of("node " + name + " is not Ready yet (journalctl -u kubelet on " + name + ")");
                })
            .waitingUpTo(READY_WAIT);
    }

    @Override public List<Probe> check(HostContext ctx) { return List.of(server(ctx)); }

    @Override public List<Op> apply(HostContext ctx) {
        String url = "https://" + ControlPlaneStep.endpoint(ctx);
        return List.of(
            Op.Run.of("kubelet.conf pointed at " + url + " (kubectl config set-cluster --server)",
                    "if [ -f " + KUBELET_CONF + " ]; then " + EndpointStep.setServer(KUBELET_CONF, url) + "; fi")
                .unlessRight(server(ctx)).changing(KUBELET_CONF),
            Op.Run.of("restart the kubelet (running containers keep running)", "systemctl restart kubelet").onlyIfChanged(KUBELET_CONF),
            Op.Await.of("wait until node " + ctx.node().name() + " is Ready through the endpoint", ready(ctx)));
    }

    @Override public String whileWaiting(String problem, Duration upTo) {
        return "waiting up to " + upTo.toSeconds() + "s: " + problem.replaceFirst(" \\(.*\\)$", "");
    }
}
