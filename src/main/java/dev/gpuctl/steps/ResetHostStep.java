package dev.gpuctl.steps;

import dev.gpuctl.text.ShellWords;
import dev.gpuctl.hostfiles.NodeCleanup;
import dev.gpuctl.step.HostContext;
import dev.gpuctl.step.Op;
import dev.gpuctl.step.Probe;
import dev.gpuctl.step.Sh;
import dev.gpuctl.step.Step;
import java.util.List;
import java.util.Optional;

/**
 * A host leaves the cluster: {@code kubeadm reset -f} with the cluster's CRI socket, then what kubeadm reset says it
 * leaves: {@value NodeCleanup#CNI_CONF_DIR}, the CNI's interfaces, the KUBE-/CNI chains of iptables and ip6tables,
 * and gpuctl's join leftovers. The host preparation (time sync, swap, kernel settings, runtime, packages) stays, so
 * that bootstrap can bring the host back without a manual step. Never touches the container runtime's images, the
 * NFS mounts, or any file gpuctl did not make.
 */
public final class ResetHostStep implements Step {
    private final List<String> hosts;

    public ResetHostStep(List<String> hosts) { this.hosts = List.copyOf(hosts); }

    @Override public String id() { return "reset-host"; }
    @Override public String title() { return "kubeadm reset and what it leaves"; }
    @Override public boolean runsOn(HostContext ctx) { return hosts.contains(ctx.node().name()); }

    /** kubeadm's files that a joined node or a control plane has. */
    static final String KUBEADM_FILES = "/etc/kubernetes/kubelet.conf /etc/kubernetes/bootstrap-kubelet.conf /etc/kubernetes/admin.conf "
        + "/etc/kubernetes/super-admin.conf /etc/kubernetes/pki/ca.crt /var/lib/kubelet/config.yaml /etc/kubernetes/manifests/kube-apiserver.yaml";
    static final String LEFT_FILES = "for f in " + KUBEADM_FILES + "; do [ -e \"$f\" ] && echo \"$f\"; done; true";
    static final String KUBELET_ACTIVE = "systemctl is-active kubelet 2>/dev/null; true";
    static final String LINKS = "ip -o link show";
    static final String IPTABLES = "for t in iptables-save ip6tables-save; do command -v $t >/dev/null 2>&1 && $t; done; true";
    static final String JOIN_LEFTOVERS = "ls -d " + JoinStep.CONFIG + " " + JoinStep.WORK_DIRS + "* 2>/dev/null; true";

    @Override public List<Probe> check(HostContext ctx) {
        return List.of(
            Probe.of("kubelet not running", KUBELET_ACTIVE, r -> {
                String s = r.stdout().strip();
                return s.equals("active") || s.equals("activating") || s.equals("reloading") ? Optional.of("kubelet is " + s) : Optional.empty();
            }),
            Probe.of("kubeadm's files gone", LEFT_FILES, r -> r.stdout().isBlank() ? Optional.empty()
                : Optional.of("still there: " + String.join(", ", r.stdout().strip().lines().toList()))),
            Probe.of("no " + NodeCleanup.CNI_CONF_DIR, "test -e " + NodeCleanup.CNI_CONF_DIR + " && echo present; true",
                r -> r.stdout().isBlank() ? Optional.empty() : Optional.of(NodeCleanup.CNI_CONF_DIR + " is still there")),
            Probe.of("no CNI interfaces", LINKS, r -> {
                if (!r.ok()) return Optional.of("ip failed (exit " + r.exit() + "): " + r.tail(2));
                var left = NodeCleanup.cniInterfaces(NodeCleanup.linkNames(r.stdout()));
                return left.isEmpty() ? Optional.empty() : Optional.of("still there: " + String.join(", ", left));
            }),
            Probe.of("no KUBE-, CNI-, FLANNEL- or cali- iptables chains", IPTABLES, r -> {
                var left = NodeCleanup.kubeChains(r.stdout());
                return left.isEmpty() ? Optional.empty() : Optional.of("still there: " + String.join(", ", left));
            }),
            Probe.of("no join leftovers", JOIN_LEFTOVERS, r -> r.stdout().isBlank() ? Optional.empty()
                : Optional.of("still there: " + String.join(", ", r.stdout().strip().lines().toList()))));
    }

    @Override public List<Op> apply(HostContext ctx) {
        String socket = ctx.cluster().runtime().criSocket();
        return List.of(
            Op.Run.of("kubeadm reset", "kubeadm reset -f --cri-socket " + ShellWords.quote(socket))
                .unless("test -z \"$(" + LEFT_FILES + ")\" && ! systemctl is-active -q kubelet"),
            Op.Run.of("remove the CNI configuration", "rm -rf " + NodeCleanup.CNI_CONF_DIR).unless("! test -e " + NodeCleanup.CNI_CONF_DIR),
            Op.Run.of("delete the CNI interfaces", "for i in " + ShellWords.words(NodeCleanup.CNI_INTERFACES)
                + " $(ip -o link show | sed -n 's/^[0-9]*: \\(cali[^:@]*\\).*/\\1/p'); do ip link show \"$i\" >/dev/null 2>&1 && ip link delete \"$i\"; done; true"),
            Op.Run.of("remove the KUBE-/CNI iptables chains", "for t in iptables ip6tables; do command -v $t-save >/dev/null 2>&1 || continue; "
                + "$t-save | grep -vE " + ShellWords.quote(NodeCleanup.CHAIN_REGEX) + " | $t-restore || exit 1; done")
                .unless("test -z \"$(" + IPTABLES + " | grep -E " + ShellWords.quote(NodeCleanup.CHAIN_REGEX) + ")\""),
            Op.Run.of("remove gpuctl's join leftovers", "rm -rf " + JoinStep.CONFIG + " " + JoinStep.WORK_DIRS + "*"));
    }
}
