package dev.gpuctl.step;

import dev.gpuctl.inventory.Cluster;
import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;
import dev.gpuctl.net.Cidr;
import java.util.Optional;

/** What a step knows when it describes its work on one host: the inventory and that host. */
public record HostContext(Inventory inventory, Node node) {
    public boolean gpu() { return node.gpu(); }
    public Cluster cluster() { return inventory.cluster(); }

    /** Whether this host is the first master: kubeadm init and the cluster-wide kubectl work run there. */
    public boolean firstMaster() { return node.isMaster() && node.name().equals(inventory.master().name()); }

    /**
     * Whether this host runs the cluster-wide kubectl and etcdctl work of a command that takes {@code leaving} out of
     * the cluster (or drains them): the first master of the inventory that is not among them, else the first master
     * (one master draining itself for an upgrade).
     */
    public boolean actingMaster(java.util.Collection<String> leaving) {
        Node acting = inventory.masters().stream().filter(m -> !leaving.contains(m.name())).findFirst().orElse(inventory.master());
        return node.isMaster() && acting.name().equals(node.name());
    }

    /**
     * The IP the cluster uses for this node (kubeadm's advertise address on the master, the kubelet's node-ip, the
     * join endpoint): {@link #literalNodeIp} when the inventory gives it, else a reference to what preflight found
     * ({@link #nodeIpFact}), filled in when a command or file is used.
     */
    public String nodeIp() {
        return literalNodeIp(node).orElse(Facts.ref(nodeIpFact(node)));
    }

    /** The inventory's IP for a node: nodes[].nodeIp when given, else its address when that is an IP. */
    public static Optional<String> literalNodeIp(Node n) {
        if (!n.nodeIp().isEmpty()) return Optional.of(n.nodeIp());
        return Cidr.parseAddress(n.address()).map(Cidr::formatAddress);
    }

    /** The fact preflight learns for a node addressed by name: the source address it uses towards the master. */
    public static String nodeIpFact(Node n) {
        return "node." + n.name() + ".ip";
    }
}
