package dev.gpuctl.inventory;

import dev.gpuctl.net.Cidr;
import dev.gpuctl.net.CidrCheck;
import dev.gpuctl.net.CidrCheck.LabeledRange;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A validated inventory. Built only by {@link InventoryLoader}; every list is immutable.
 *
 * @param warnings what the user should know that does not stop a run, e.g. a ~/.ssh/config Match block gpuctl skipped
 * @param sshNotes those of the warnings that ~/.ssh/config gave for each node (by node name; a node with none is absent)
 */
public record Inventory(Path file, Cluster cluster, List<Node> nodes, Optional<Nfs> nfs, List<String> warnings,
                        java.util.Map<String, List<String>> sshNotes, List<Team> teams, Kueue kueue) {
    public Inventory {
        nodes = List.copyOf(nodes);
        teams = List.copyOf(teams);
        warnings = List.copyOf(warnings);
        java.util.Map<String, List<String>> notes = new java.util.LinkedHashMap<>();
        sshNotes.forEach((k, v) -> notes.put(k, List.copyOf(v)));
        sshNotes = java.util.Collections.unmodifiableMap(notes);
    }

    public Inventory(Path file, Cluster cluster, List<Node> nodes, Optional<Nfs> nfs, List<String> warnings,
                     java.util.Map<String, List<String>> sshNotes) {
        this(file, cluster, nodes, nfs, warnings, sshNotes, List.of(), Kueue.defaults());
    }

    public Inventory(Path file, Cluster cluster, List<Node> nodes, Optional<Nfs> nfs, List<String> warnings) {
        this(file, cluster, nodes, nfs, warnings, java.util.Map.of());
    }

    public Optional<Team> team(String name) {
        return teams.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /** The team {@code person} is a member of, if any. */
    public Optional<Team> teamOf(String person) {
        return teams.stream().filter(t -> t.members().contains(person)).findFirst();
    }

    /** A GPU node's model as teams' quotas name it: its gpuModel, else {@link Team#DEFAULT_MODEL}. */
    public static String gpuModel(Node node) {
        return node.gpuModel().isEmpty() ? Team.DEFAULT_MODEL : node.gpuModel();
    }

    /** The GPU models of the GPU nodes, sorted ({@link Team#DEFAULT_MODEL} alone when no node names its model). */
    public List<String> gpuModels() {
        return nodes.stream().filter(Node::gpu).map(Inventory::gpuModel).distinct().sorted().toList();
    }

    /** Whether any node names its GPU model (then nodes are labelled with it and each model is its own ResourceFlavor). */
    public boolean namesGpuModels() {
        return nodes.stream().anyMatch(n -> n.gpu() && !n.gpuModel().isEmpty());
    }

    /** What ~/.ssh/config made gpuctl skip for this node (e.g. a Match block it does not read), "FILE:LINE: what" each. */
    public List<String> sshNotes(Node node) {
        return sshNotes.getOrDefault(node.name(), List.of());
    }

    public Inventory(Path file, Cluster cluster, List<Node> nodes, Optional<Nfs> nfs) {
        this(file, cluster, nodes, nfs, List.of());
    }

    /** The first master: kubeadm init runs here; the other masters join it. */
    public Node master() {
        return nodes.stream().filter(Node::isMaster).findFirst().orElseThrow();
    }

    /** Every master, in inventory order (1, 3 or 5). */
    public List<Node> masters() {
        return nodes.stream().filter(Node::isMaster).toList();
    }

    /**
     * This inventory with {@code name}, one of its masters, as the first master (the others keep their order, so do the
     * workers): what a command that needs one healthy master's kubectl runs against when the first master is down.
     * The controlPlaneEndpoint stays (several masters always name one). Itself when {@code name} is already first.
     */
    public Inventory actingFirst(String name) {
        Node acting = node(name).filter(Node::isMaster).orElseThrow(() -> new IllegalArgumentException(name + " is not a master"));
        if (acting.name().equals(master().name())) return this;
        List<Node> reordered = new java.util.ArrayList<>();
        reordered.add(acting);
        nodes.stream().filter(n -> !n.name().equals(name)).forEach(reordered::add);
        return new Inventory(file, cluster, reordered, nfs, warnings, sshNotes, teams, kueue);
    }

    /** Whether the control plane has more than one master. */
    public boolean highlyAvailable() { return masters().size() > 1; }

    /**
     * The cluster's controlPlaneEndpoint: the inventory's, else the first master's address (its nodeIp when given) and
     * 6443. Every new cluster is initialised with one, so that masters can be added later.
     */
    public ControlPlaneEndpoint controlPlaneEndpoint() {
        return cluster.controlPlaneEndpoint().orElseGet(() -> {
            Node m = master();
            return new ControlPlaneEndpoint(ControlPlaneEndpoint.Kind.MASTER,
                m.nodeIp().isEmpty() ? m.address() : m.nodeIp(), ControlPlaneEndpoint.API_SERVER_PORT);
        });
    }

    public List<Node> workers() {
        return nodes.stream().filter(n -> !n.isMaster()).toList();
    }

    public Optional<Node> node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst();
    }

    /** How {@code node}'s GPUs are shared: its own gpuSharing, else the cluster's; {@link GpuSharing#NONE} without GPUs. */
    public GpuSharing sharing(Node node) {
        if (!node.gpu()) return GpuSharing.NONE;
        return node.gpuSharing().orElse(cluster.gpuSharing());
    }

    /** Whether any GPU node shares its GPUs or cuts them into MIG instances (then the device plugin runs with its config manager). */
    public boolean sharesGpus() {
        return nodes.stream().anyMatch(n -> sharing(n).configured());
    }

    /** Local state (kubeconfig, join command cache, logs) lives beside the inventory. */
    public Path stateDir() {
        Path dir = file.toAbsolutePath().getParent();
        return dir.resolve(".gpuctl");
    }

    /** The laptop's copy of the cluster's admin.conf: .gpuctl/CLUSTER/admin.conf beside the inventory. */
    public Path localKubeconfig() {
        return stateDir().resolve(cluster.name()).resolve("admin.conf");
    }

    /**
     * What the inventory alone tells: podCidr, serviceCidr, each node address given as an IP literal
     * (a /32 or /128; host names are resolved only at preflight), each site network.
     */
    public List<LabeledRange> staticRanges() {
        List<LabeledRange> ranges = new ArrayList<>();
        ranges.add(new LabeledRange(CidrCheck.POD_CIDR, cluster.podCidr(), "cluster.podCidr"));
        ranges.add(new LabeledRange(CidrCheck.SERVICE_CIDR, cluster.serviceCidr(), "cluster.serviceCidr"));
        for (Node node : nodes) {
            Cidr.parseAddress(node.address()).ifPresent(bytes -> ranges.add(
                new LabeledRange(CidrCheck.NODE_ADDRESS, new Cidr(bytes, bytes.length * 8), "node " + node.name() + " address", node.name())));
        }
        List<Cidr> sites = cluster.siteNetworks();
        for (int i = 0; i < sites.size(); i++) {
            ranges.add(new LabeledRange(CidrCheck.SITE_NETWORK, sites.get(i), "cluster.siteNetworks[" + i + "]"));
        }
        return ranges;
    }
}
