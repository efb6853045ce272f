package dev.gpuctl.steps;

import dev.gpuctl.hostconf.Kube;
import dev.gpuctl.remote.ExecResult;
import java.util.List;
import java.util.Optional;

/**
 * {@code controlPlaneSchedulable: true} (small labs): the master's {@code node-role.kubernetes.io/control-plane}
 * taint, which kubeadm init puts there, is removed so that pods run on the master too; the NVIDIA device plugin then
 * covers a master with {@code gpu: true} (its DaemonSet tolerates only nvidia.com/gpu). Without the setting this step
 * does nothing: setting it back to false does not put the taint back (kubectl taint nodes MASTER
 * node-role.kubernetes.io/control-plane:NoSchedule does).
 */
public final class SchedulableStep implements Step {
    public static final String TAINT = "node-role.kubernetes.io/control-plane";

    @Override public String id() { return "schedulable"; }
    @Override public String title() { return "control plane schedulable (taint removed)"; }
    @Override public boolean readsCluster() { return true; }
    @Override public boolean runsOn(HostContext ctx) {
        return ctx.node().isMaster() && ctx.cluster().controlPlaneSchedulable();
    }

    /** The keys of the master's taints, one a line. */
    static String taintKeys(String node) {
        return Kube.kubectl("get node " + Sh.quote(node) + " -o 'jsonpath={range .spec.taints[*]}{.key}{\"\\n\"}{end}'");
    }

    /** Why the answer shows the control-plane taint still there, or that kubectl failed; empty when it is gone. */
    static Optional<String> problem(ExecResult r, String node) {
        if (!r.ok()) return Optional.of("kubectl failed (exit " + r.exit() + "): " + r.tail(2));
        boolean tainted = r.stdout().lines().map(String::strip).anyMatch(TAINT::equals);
        return tainted ? Optional.of("node " + node + " still has the " + TAINT + " taint: pods do not run there") : Optional.empty();
    }

    @Override public List<Probe> check(HostContext ctx) {
        String node = ctx.node().name();
        return List.of(Probe.of("no " + TAINT + " taint on " + node + " (controlPlaneSchedulable)", taintKeys(node),
            r -> problem(r, node)));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String node = ctx.node().name();
        return List.of(Op.Run.of("remove the " + TAINT + " taint from " + node,
                Kube.kubectl("taint nodes " + Sh.quote(node) + " " + TAINT + "-"))
            .unless("! " + taintKeys(node) + " | grep -qxF " + TAINT));
    }
}
