package dev.gpuctl.steps;

import dev.gpuctl.hostconf.Kube;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Read-only, before a restore changes anything: the master has had bootstrap's host preparation (kubeadm and the kubelet
 * are installed), and, unless forced, it does not run a healthy cluster (whose state the restore would replace).
 */
public final class RestoreGuardStep implements Step {
    private final boolean force;

    public RestoreGuardStep(boolean force) { this.force = force; }

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
