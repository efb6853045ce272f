package dev.gpuctl.inventory;

import java.util.List;

/**
 * storage.nfs: one NFS server and its exports. The server is a node of the inventory (gpuctl sets it up and
 * restricts the exports to the nodes), or, when {@code external}, an address outside the inventory (a NAS): gpuctl
 * then only sets up the clients and proves each export with a test mount.
 */
public record Nfs(String server, List<NfsExport> exports, boolean external) {
    public Nfs { exports = List.copyOf(exports); }

    public Nfs(String server, List<NfsExport> exports) { this(server, exports, false); }

    /** The address clients mount from: the server node's address, or the external server's own. */
    public String address(Inventory inv) {
        return external ? server : inv.node(server).map(Node::address).orElse(server);
    }
}
