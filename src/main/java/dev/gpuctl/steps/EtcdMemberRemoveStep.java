package dev.gpuctl.steps;

import dev.gpuctl.kube.EtcdCluster;
import dev.gpuctl.step.Facts;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A master's etcd member removed from the cluster ({@code etcdctl member remove ID}), asked of a healthy other master
 * (the acting master, {@link HostContext#actingMaster}) before the leaving master is reset: kubeadm's own reset would
 * remove it too, but only while that master's API server and member still answer, and a stale member counts against the
 * quorum for good. Right when no member carries the master's name. The apply re-reads the cluster and refuses, changing
 * nothing, when another master is down or the members left would be fewer than a quorum of healthy ones
 * ({@link EtcdCluster.View#removalRefusal}); etcd's own strict reconfiguration check refuses the same.
 */
public final class EtcdMemberRemoveStep implements Step {
    static final String ID_FACT = "etcd.remove.id";
    private final String master;

    public EtcdMemberRemoveStep(String master) { this.master = master; }

    @Override public String id() { return "etcd-member"; }
    @Override public String title() { return "remove " + master + "'s etcd member (from another master)"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.actingMaster(List.of(master)) && !ctx.node().name().equals(master); }

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(Probe.of("no etcd member named " + master, EtcdCluster.query(ctx.cluster().runtime().criSocket()), r -> {
            EtcdCluster.View v = EtcdCluster.parse(r.stdout());
            if (!v.error().isEmpty()) return Optional.of("etcdctl failed: " + v.error());
            return v.named(master).map(m -> "still a member: " + master + " (" + m.id() + "); " + v.summary());
        }));
    }

    /** The member's ID to remove, or the refusal (an IllegalArgumentException: the step fails, nothing changed). */
    static Map<String, String> memberToRemove(String answer, String master) {
        EtcdCluster.View v = EtcdCluster.parse(answer);
        Optional<String> refusal = v.removalRefusal(master);
        if (refusal.isPresent()) throw new IllegalArgumentException("refused: " + refusal.get() + ". Nothing was changed.");
        return v.named(master).map(m -> Map.of(ID_FACT, m.id())).orElse(Map.of(ID_FACT, ""));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String socket = ctx.cluster().runtime().criSocket();
        return List.of(
            new Op.Capture("etcd's members and their health, and the quorum without " + master, EtcdCluster.query(socket),
                out -> memberToRemove(out, master), false),
            Op.Run.of("etcdctl member remove (" + master + ")", EtcdCluster.etcdctlFunction(socket)
                + "id=" + Facts.ref(ID_FACT) + "; [ -z \"$id\" ] || etcdctl_ member remove \"$id\""));
    }
}
