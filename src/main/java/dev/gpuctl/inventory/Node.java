package dev.gpuctl.inventory;

import java.util.Map;

/**
 * One host. Workers have GPUs unless the inventory says gpu: false; the master has none unless gpu: true.
 * connection is "ssh" (default) or "local" (commands run on the machine gpuctl runs on).
 */
public record Node(String name, String address, Role role, boolean gpu, Map<String, String> labels,
                   SshSettings ssh, String connection) {
    public Node {
        labels = Map.copyOf(labels);
    }
    public boolean isMaster() { return role == Role.MASTER; }
    public boolean isLocal() { return "local".equals(connection); }
}
