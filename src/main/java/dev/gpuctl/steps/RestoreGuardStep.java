package dev.gpuctl.steps;

import dev.gpuctl.kube.Kube;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Read-only, before a restore changes anything: the master has had bootstrap's host preparation (kubeadm and the kubelet
 * are installed), and, unless forced, it does not run a healthy cluster (whose state the restore would replace).
 */
public final class RestoreGuardStep implements Step {
    private final boolean force;
    private final boolean wholeControlPlane;

    public RestoreGuardStep(boolean force) { this(force, false); }

    /**
     * @param wholeControlPlane a restore of several masters: each keeps its own PKI and manifests (they name it), so
     *                          each must still have them (or have them set aside by a restore that was cut off)
     */
    public RestoreGuardStep(boolean force, boolean wholeControlPlane) {
        this.force = force;
        this.wholeControlPlane = wholeControlPlane;
    }

    @Override public String id() { return "restore-check"; }
    @Override public String title() { return "restore: the master is ready for it"; }
    @Override public boolean runsOn(HostContext ctx) { return ctx.node().isMaster(); }

    @Override public List<Probe> check(HostContext ctx) {
        String host = ctx.node().name();
        List<Probe> probes = new ArrayList<>();
        probes.add(Probe.of("kubeadm and the kubelet installed (bootstrap's host preparation done)",
            "command -v kubeadm && command -v kubelet && command -v crictl",
            r -> r.ok() ? Optional.empty() : Optional.of(host + " lacks kubeadm, kubelet or crictl: prepare it first: gpuctl bootstrap"
                + " INVENTORY --hosts " + host + " --only " + String.join(",", HOST_STEPS))));
        if (wholeControlPlane) {
            probes.add(Probe.of("this master's own PKI and etcd manifest in place (a restore of several masters keeps them)",
                "test -f /etc/kubernetes/pki/etcd/server.crt && { test -f /etc/kubernetes/manifests/etcd.yaml"
                    + " || test -f \"$(cat " + RestoreStep.RESTORING + " 2>/dev/null)/manifests-running/etcd.yaml\"; }",
                r -> r.ok() ? Optional.empty() : Optional.of(host + " has no /etc/kubernetes/pki/etcd/server.crt or etcd manifest: a restore"
                    + " of several masters puts back etcd's data on masters that still have their own PKI and manifests. A master"
                    + " whose disk was lost joins again as a new member once the others run: take it out of the inventory for the"
                    + " restore, then add it back and run gpuctl bootstrap")));
        }
        if (!force) {
            probes.add(Probe.of("no healthy cluster running on the master",
                "test -f " + Kube.ADMIN_CONF + " && timeout 20 " + Kube.kubectl("get --raw=/readyz 2>&1") + " || true",
                r -> healthy(r.stdout()) ? Optional.of(host + " runs a healthy cluster (kubectl get --raw=/readyz: ok); a restore would"
                    + " replace its whole state with the backup's: add --force to do that") : Optional.empty()));
        }
        return probes;
    }

    /** The bootstrap steps that prepare a host (the "hosts" phase), for the hint. */
    static final List<String> HOST_STEPS = List.of("proxy", "time", "swap", "kernel", "runtime", "packages", "driver-hold");

    static boolean healthy(String readyz) { return readyz.strip().equals("ok"); }

    @Override public List<Op> apply(HostContext ctx) { return List.of(); }
}
