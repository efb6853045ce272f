package dev.gpuctl.inventory;

import java.util.List;

/** storage.nfs: one NFS server (a node of the inventory) and its exports. */
public record Nfs(String server, List<NfsExport> exports) {
    public Nfs { exports = List.copyOf(exports); }
}
