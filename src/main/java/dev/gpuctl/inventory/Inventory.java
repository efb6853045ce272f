package dev.gpuctl.inventory;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** A validated inventory. Built only by {@link InventoryLoader}; every list is immutable. */
public record Inventory(Path file, Cluster cluster, List<Node> nodes, Optional<Nfs> nfs) {
    public Inventory {
        nodes = List.copyOf(nodes);
    }

    public Node master() {
        return nodes.stream().filter(Node::isMaster).findFirst().orElseThrow();
    }

    public List<Node> workers() {
        return nodes.stream().filter(n -> !n.isMaster()).toList();
    }

    public Optional<Node> node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst();
    }

    /** Local state (kubeconfig, join command cache, logs) lives beside the inventory. */
    public Path stateDir() {
        Path dir = file.toAbsolutePath().getParent();
        return dir.resolve(".gpuctl");
    }
}
