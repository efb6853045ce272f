package dev.gpuctl.steps;

import dev.gpuctl.inventory.Inventory;
import dev.gpuctl.inventory.Node;

/** What a step knows when it describes its work on one host: the inventory and that host. */
public record HostContext(Inventory inventory, Node node) {
    public boolean gpu() { return node.gpu(); }
    public dev.gpuctl.inventory.Cluster cluster() { return inventory.cluster(); }
}
