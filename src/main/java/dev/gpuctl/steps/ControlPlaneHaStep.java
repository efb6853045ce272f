package dev.gpuctl.steps;

import dev.gpuctl.kube.EtcdCluster;
import dev.gpuctl.inventory.ControlPlaneEndpoint;
import dev.gpuctl.remote.ExecResult;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * verify's view of a control plane of several masters, asked on each master: its etcd member (name, ID, leader or
 * follower, healthy), the quorum (healthy voting members against a majority; a master that is down is named while the
 * quorum holds, and the check passes), its API server's {@code /readyz} over its own address, and, when the endpoint is
 * a VIP, whether this master holds it (a holder whose API server is not ready is wrong: haproxy would send every client
 * to the others, and keepalived's check should have moved it). The VIP answering at all is the vip step's check
 * ({@link LoadBalancerStep}). etcdctl runs as kubeadm's docs run it on a control-plane node ({@link EtcdCluster#query}).
 * Only verify asks it ({@link Steps#verifyPhases}).
 */
public final class ControlPlaneHaStep implements Step {
    public static final String ID = "control-plane";
    static final String QUORUM = "etcd quorum: a majority of the members healthy";
    static final String MEMBER = "this master's etcd member is a healthy voting member";
    static final String API = "this master's API server is ready (/readyz over its own address)";
    static final String VIP = "the VIP is held only where the API server is ready";

    @Override public String id() { return ID; }
    @Override public String title() { return "highly available control plane (etcd members, quorum, API servers, VIP)"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster() && ctx.inventory().highlyAvailable(); }

    static String keptKey(String host) { return "control-plane.etcd." + host; }
    static String vipKey(String host) { return "control-plane.vip." + host; }

    @Override public List<Probe> check(HostContext ctx) {
        String host = ctx.node().name();
        String query = EtcdCluster.query(ctx.cluster().runtime().criSocket());
        String readyz = "curl -sk --max-time 5 https://" + ctx.nodeIp() + ":" + ControlPlaneEndpoint.API_SERVER_PORT + "/readyz; echo";
        List<Probe> probes = new ArrayList<>(List.of(
            new Probe(QUORUM, query, (r, facts) -> {
                facts.keep(keptKey(host), r);
                return EtcdCluster.parse(r.stdout()).quorumProblem();
            }, r -> Map.of(), Duration.ZERO),
            Probe.of(MEMBER, query, r -> EtcdCluster.parse(r.stdout()).memberProblem(host)),
            Probe.of(API, readyz, r -> r.stdout().strip().equals("ok") ? Optional.empty()
                : Optional.of("/readyz answered '" + Probe.oneLine(r.stdout()) + "'" + Probe.stderrHint(r)))));
        ControlPlaneEndpoint e = ctx.inventory().controlPlaneEndpoint();
        if (e.isVip()) {
            probes.add(new Probe(VIP, holds(e.host()) + "; " + readyz, (r, facts) -> {
                facts.keep(vipKey(host), r);
                return vipProblem(r.stdout(), e.host());
            }, r -> Map.of(), Duration.ZERO));
        }
        return probes;
    }

    /** "holder" or "backup" on the first line: whether this host has the VIP on an interface. */
    static String holds(String vip) {
        return "if ip -o addr show | grep -qF ' " + vip + "/'; then echo holder; else echo backup; fi";
    }

    static Optional<String> vipProblem(String out, String vip) {
        List<String> lines = out.strip().lines().toList();
        if (lines.isEmpty()) return Optional.of("no answer");
        if (!lines.get(0).equals("holder")) return Optional.empty();
        String ready = lines.size() > 1 ? lines.get(1).strip() : "";
        return ready.equals("ok") ? Optional.empty()
            : Optional.of("holds the VIP " + vip + " while its API server is not ready (/readyz: '" + ready + "')");
    }

    @Override public String detail(Probe probe, Facts facts, String host) {
        Optional<ExecResult> kept = facts.kept(keptKey(host));
        if (probe.what().equals(QUORUM)) return kept.map(r -> EtcdCluster.parse(r.stdout()).summary()).orElse("");
        if (probe.what().equals(MEMBER)) return kept.map(r -> EtcdCluster.parse(r.stdout()).memberDetail(host)).orElse("");
        if (probe.what().equals(VIP)) {
            return facts.kept(vipKey(host)).map(r -> r.stdout().startsWith("holder") ? "holds the VIP" : "does not hold the VIP (backup)").orElse("");
        }
        return "";
    }

    @Override public String fix(Probe probe, boolean failed, String host, String inventory) {
        return switch (probe.what()) {
            case QUORUM -> "bring the masters that are down back up (their etcd members rejoin on their own); with a majority lost"
                + " for good, restore the control plane from a backup (gpuctl restore)";
            case MEMBER -> "on " + host + ": systemctl status kubelet, crictl ps --name etcd; a member gone for good: gpuctl remove-node "
                + host + " -i " + inventory + ", then gpuctl bootstrap " + inventory + " joins it again";
            case API -> "on " + host + ": crictl ps --name kube-apiserver, journalctl -u kubelet; then gpuctl verify " + inventory;
            default -> "on " + host + ": systemctl restart keepalived (its check moves the VIP to a ready master)";
        };
    }

    /** Nothing to apply: only verify runs this step. */
    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
