package dev.gpuctl.hostfiles;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What {@code kubeadm reset} says it leaves on a host (CNI configuration, network filtering rules, the CNI's
 * interfaces), recognised in what the host answers. Pure: text in, names out.
 */
public final class NodeCleanup {
    private NodeCleanup() {}

    /** Where CNI plugins read their configuration; kubeadm reset leaves it. */
    public static final String CNI_CONF_DIR = "/etc/cni/net.d";

    /**
     * Interfaces the CNIs gpuctl installs make: the bridge plugin's cni0, flannel's flannel.1 (and flannel-v6.1),
     * calico's vxlan.calico, vxlan-v6.calico and tunl0 (IPIP), and the veth ends of pods (cali*, veth*).
     */
    public static final List<String> CNI_INTERFACES = List.of("cni0", "flannel.1", "flannel-v6.1", "vxlan.calico", "vxlan-v6.calico", "tunl0");

    /** A line of iptables-save that names a chain kube-proxy or a CNI made (KUBE-*, CNI-*, FLANNEL-*, cali-*). */
    public static final String CHAIN_REGEX = "(^|[ :])(KUBE-|CNI-|FLANNEL-|cali-)";

    private static final Pattern CHAIN = Pattern.compile(CHAIN_REGEX);

    /** Names of {@code ip -o link show} lines ("2: cni0: <...>", "5: veth12@if3: ..."), without the peer after '@'. */
    public static List<String> linkNames(String ipOLink) {
        return ipOLink.lines().map(l -> l.split(": ", 3)).filter(f -> f.length >= 2).map(f -> f[1].split("@", 2)[0].strip()).toList();
    }

    /** The CNI interfaces among a host's links, in the host's order. */
    public static List<String> cniInterfaces(List<String> links) {
        return links.stream().filter(n -> CNI_INTERFACES.contains(n) || n.startsWith("cali")).toList();
    }

    /** The chains of an iptables-save text that kube-proxy or a CNI made, each once, in order. */
    public static List<String> kubeChains(String iptablesSave) {
        return iptablesSave.lines().filter(l -> l.startsWith(":") && CHAIN.matcher(l).find())
            .map(l -> l.substring(1).split(" ", 2)[0]).distinct().toList();
    }

}
