package dev.gpuctl.steps;

import dev.gpuctl.kube.EndpointMigration;
import dev.gpuctl.text.HostConfException;
import dev.gpuctl.kube.Kube;
import dev.gpuctl.kube.KubeadmConfig;
import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Preflight, read-only, on the first master: what the running cluster says of its control plane (kubeadm-config's
 * controlPlaneEndpoint, its control-plane nodes and whether each is Ready), learned as the typed fact {@link #VIEW},
 * and the changes bootstrap refuses before anything changes anywhere ({@link EndpointMigration#refusal}): a master
 * dropped from the inventory (a shrink that would leave its etcd member behind), an endpoint moved from anything but
 * the single master's own address, and any change while a master is not Ready. A master without a cluster, or whose
 * API server does not answer, is not judged here (init and the endpoint step say what is wrong).
 */
public final class ControlPlaneChangeStep implements Step {
    public static final String ID = "control-plane-change";

    /** What the cluster says ({@link EndpointMigration.View}); not learned when there is no cluster or it did not answer. */
    public static final Facts.Key<EndpointMigration.View> VIEW = new Facts.Key<>("cluster.controlPlane", EndpointMigration.View.class,
        t -> EndpointMigration.View.parse(t).orElseThrow());

    static final String READ = Kube.kubectl("-n kube-system get cm kubeadm-config -o json")
        + " && echo " + EndpointMigration.SEPARATOR + " && " + Kube.kubectl("get nodes -o json");

    /**
     * Whether the cluster may have (or get) several masters: the inventory gives a VIP or a site address, or several
     * masters. Then the question is {@link #READ} (the API); else only admin.conf's server is read (a file: #32's limit on
     * kubectl calls), since a single master keeping its own address changes nothing and any other server there is refused.
     */
    static boolean mayHaveSeveral(HostContext ctx) {
        return ctx.inventory().controlPlaneEndpoint().kind() != ControlPlaneEndpoint.Kind.MASTER || ctx.inventory().masters().size() > 1;
    }

    /** The question: nothing without a cluster; {@link #READ}, or admin.conf's server ({@link #mayHaveSeveral}). */
    static String question(HostContext ctx) {
        return "if [ -f " + Kube.ADMIN_CONF + " ]; then " + (mayHaveSeveral(ctx) ? READ
            : "echo \"" + SERVER + " $(sed -n 's/^[[:space:]]*server:[[:space:]]*//p' " + Kube.ADMIN_CONF + ")\"") + "; fi";
    }

    /** The answer's prefix when only admin.conf's server was read. */
    static final String SERVER = "admin.conf-server";

    /** A single master's admin.conf naming another endpoint than its own: the endpoint would move from a load balancer. */
    static Optional<String> serverProblem(String answer, String own) {
        String server = answer.strip().substring(SERVER.length()).strip();
        return server.equals("https://" + own) ? Optional.empty()
            : Optional.of("the master's admin.conf names " + server + " and the inventory asks for the master's own address " + own
                + " (no controlPlaneEndpoint, one master); gpuctl moves only a single master's own address to a VIP or a site load"
                + " balancer, never back: the nodes joined through " + server + " would be orphaned; put controlPlaneEndpoint and the"
                + " masters back in the inventory");
    }

    @Override public String id() { return ID; }
    @Override public String title() { return "the running control plane against the inventory's (endpoint, masters)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.firstMaster(); }
    @Override public String fix(Probe probe, boolean failed, String host, String inventory) { return PreflightStep.FIX; }

    /** The first master's own address and 6443: the endpoint of a cluster made without one. */
    static String ownEndpoint(HostContext ctx) {
        HostContext first = new HostContext(ctx.inventory(), ctx.inventory().master());
        return KubeadmConfig.hostForUrl(first.nodeIp()) + ":" + ControlPlaneEndpoint.API_SERVER_PORT;
    }

    @Override public List<Probe> check(HostContext ctx) {
        List<String> masters = ctx.inventory().masters().stream().map(Node::name).toList();
        String inventory = String.valueOf(ctx.inventory().file());
        return List.of(Probe.of("the cluster's controlPlaneEndpoint and control-plane nodes (kubeadm-config, kubectl get nodes)", question(ctx),
                r -> Optional.empty())
            .learning(r -> {
                if (!r.ok() || r.stdout().isBlank() || r.stdout().startsWith(SERVER)) return Map.of();
                try {
                    EndpointMigration.View.parse(r.stdout());
                    return Map.of(VIEW.name(), r.stdout());
                } catch (HostConfException e) {
                    return Map.of();
                }
            })
            .judgedWithFacts((r, facts) -> {
                if (!r.ok() || r.stdout().isBlank()) return Optional.empty();
                if (r.stdout().startsWith(SERVER)) {
                    try {
                        return serverProblem(r.stdout(), facts.substitute(ownEndpoint(ctx)));
                    } catch (IllegalStateException notLearned) {
                        return Optional.empty();
                    }
                }
                EndpointMigration.View view;
                try {
                    view = EndpointMigration.View.parse(r.stdout()).orElseThrow();
                } catch (HostConfException e) {
                    return Optional.of("cannot read what the cluster says of its control plane: " + e.getMessage());
                }
                try {
                    return EndpointMigration.refusal(view, masters, facts.substitute(ControlPlaneStep.endpoint(ctx)),
                        facts.substitute(ownEndpoint(ctx)), inventory);
                } catch (IllegalStateException notLearned) { // a master named by host name whose address preflight did not learn
                    return Optional.empty();
                }
            }));
    }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
